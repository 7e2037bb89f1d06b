//go:build tools

// Package tools pins Prometheus' promtool, which tests the stack's alerting rules
// (`promtool test rules`), so that this module's go.sum fixes every dependency.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
