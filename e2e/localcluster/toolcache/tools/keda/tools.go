//go:build tools

// Package tools pins the KEDA operator and metrics adapter so that this
// module's go.sum fixes every dependency the local control plane builds.
package tools

import (
	_ "github.com/kedacore/keda/v2/cmd/adapter"
	_ "github.com/kedacore/keda/v2/cmd/operator"
)
