//go:build tools

// Package tools pins kubectl to the same k8s.io/kubernetes release and replace block as the
// control plane's (../kubernetes), so that this module's go.sum fixes every dependency. A module
// of its own, so that adding it left the control plane's cache key, and so its cached build, as
// they were, while the Go build cache shares every package the two compile alike.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubectl"
)
