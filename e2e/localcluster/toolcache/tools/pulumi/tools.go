//go:build tools

// Package tools pins github.com/pulumi/pulumi/pkg/v3/cmd/pulumi so that this module's go.sum fixes every
// dependency of the upstream program the local control plane builds.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
