//go:build tools

// Package tools pins kube-state-metrics (its main package is the module's root), which the live
// alert table runs against the local control plane for the HPA and pod metrics the alerting rules
// read, so that this module's go.sum fixes every dependency.
package tools

import (
	_ "k8s.io/kube-state-metrics/v2"
)
