//go:build tools

// Package tools pins Karpenter's KWOK cloud provider (sigs.k8s.io/karpenter/kwok,
// its kwok/main.go: Karpenter's core controllers over a cloud provider whose
// instances are Node objects that KWOK plays) so that this module's go.sum fixes
// every dependency the local control plane builds.
package tools

import _ "sigs.k8s.io/karpenter/kwok"
