//go:build tools

// Package tools pins gVisor's runsc and its containerd shim (the local
// stand-in for the isolated-sandbox runtime) so that this module's go.sum
// fixes every dependency.
package tools

import (
	_ "gvisor.dev/gvisor/runsc"
	_ "gvisor.dev/gvisor/shim"
)
