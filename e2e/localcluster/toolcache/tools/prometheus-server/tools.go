//go:build tools

// Package tools pins the Prometheus server (cmd/prometheus), which advise's live test runs as the
// history's source (history.FromPrometheus), so that this module's go.sum fixes every dependency.
// It is a module of its own, beside promtool's (../prometheus), so that adding it left promtool's
// cache key, and so its cached build, as they were.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
)
