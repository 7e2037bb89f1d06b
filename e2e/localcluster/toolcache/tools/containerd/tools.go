//go:build tools

// Package tools pins containerd 2.x (its CRI serves the real nodes' kubelets)
// with its runc shim, and ctr (image import) so that this module's go.sum fixes every dependency.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
