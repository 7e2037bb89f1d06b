//go:build tools

// Package tools pins the Kubernetes control-plane commands so that this
// module's go.sum fixes every dependency the local control plane builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
