// Package gvr names the API resources the product reads and writes, as the dynamic client
// addresses them: verify, the local control plane's readiness check and the tests share these,
// built from contract's names (contract itself imports only the standard library).
package gvr

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

var (
	// SandboxTemplate is agent-sandbox's extensions SandboxTemplate.
	SandboxTemplate = schema.GroupVersionResource{Group: contract.AgentSandboxExtensionsGroup, Version: contract.AgentSandboxVersion, Resource: contract.SandboxTemplatesResource}
	// SandboxWarmPool is the pool whose spec.replicas KEDA's HPA writes.
	SandboxWarmPool = schema.GroupVersionResource{Group: contract.AgentSandboxExtensionsGroup, Version: contract.AgentSandboxVersion, Resource: contract.SandboxWarmPoolsResource}
	// SandboxClaim is the demand the exporter counts.
	SandboxClaim = schema.GroupVersionResource{Group: contract.AgentSandboxExtensionsGroup, Version: contract.AgentSandboxVersion, Resource: contract.SandboxClaimsResource}
	// Sandbox is agent-sandbox's core Sandbox (a warm one, or one a claim adopted).
	Sandbox = schema.GroupVersionResource{Group: contract.AgentSandboxGroup, Version: contract.AgentSandboxVersion, Resource: contract.SandboxesResource}
	// ScaledObject is KEDA's ScaledObject.
	ScaledObject = schema.GroupVersionResource{Group: contract.KedaGroup, Version: contract.KedaVersion, Resource: contract.ScaledObjectsResource}
)
