//go:build tools

// Package tools pins the node's Kubernetes commands (kubelet, kube-proxy) to
// the same k8s.io/kubernetes release and replace block as the control plane's
// (tools/kubernetes), in a module of their own so that adding them changes no
// cache key of the API server's build, while the Go build cache shares every
// package the two compile alike.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
