//go:build tools

// Package tools pins sigs.k8s.io/kwok/cmd/kwok so that this module's go.sum fixes every
// dependency of the upstream program the local control plane builds.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
