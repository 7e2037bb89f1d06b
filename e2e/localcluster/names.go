package localcluster

import "warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"

// The names callers read nodes and pods by, kept here so that they need not
// know which part of the control plane defines them.
const (
	// SandboxNodeLabel marks the nodes the isolated RuntimeClass schedules to.
	SandboxNodeLabel = procspec.SandboxNodeLabel
	// RealNodeLabel marks real nodes (value "true").
	RealNodeLabel = procspec.RealNodeLabel
	// ClusterDomain is the kubelet's and CoreDNS's cluster domain.
	ClusterDomain = procspec.ClusterDomain
	// ClusterDNSAddress is where the cluster DNS answers (with real nodes).
	ClusterDNSAddress = procspec.ClusterDNSAddress
)

// InstanceType is one instance type Karpenter may launch (Options.Karpenter).
type InstanceType = procspec.InstanceType
