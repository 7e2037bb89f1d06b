package contract

// agent-sandbox's APIs: the core Sandbox and the extensions (templates, warm pools, claims).
// Every one is served and stored as v1beta1, the only version the project uses.
const (
	AgentSandboxGroup           = "agents.x-k8s.io"
	AgentSandboxExtensionsGroup = "extensions.agents.x-k8s.io"
	AgentSandboxVersion         = "v1beta1"
	// AgentSandboxNamespace is where the release manifest installs the controller.
	AgentSandboxNamespace = "agent-sandbox-system"
	// AgentSandboxControllerService is the controller's Service in the release manifest
	// (k8s/controller.yaml): label and selector app=<the same name>, plain HTTP /metrics on its
	// port AgentSandboxMetricsPort (8080).
	AgentSandboxControllerService = "agent-sandbox-controller"
	AgentSandboxMetricsPort       = "metrics"
	// AgentSandboxExtensionsAPIVersion is the apiVersion of templates, warm pools and claims.
	AgentSandboxExtensionsAPIVersion = AgentSandboxExtensionsGroup + "/" + AgentSandboxVersion

	SandboxesResource        = "sandboxes"
	SandboxTemplatesResource = "sandboxtemplates"
	SandboxWarmPoolsResource = "sandboxwarmpools"
	SandboxClaimsResource    = "sandboxclaims"

	SandboxKind         = "Sandbox"
	SandboxTemplateKind = "SandboxTemplate"
	SandboxWarmPoolKind = "SandboxWarmPool"
	SandboxClaimKind    = "SandboxClaim"

	// LaunchTypeLabel is set by the controller on a claimed Sandbox: "warm" when it adopted a
	// pre-booted one.
	LaunchTypeLabel = AgentSandboxGroup + "/launch-type"
	// PodNameAnnotation names a Sandbox's pod when it is not named after the Sandbox.
	PodNameAnnotation = AgentSandboxGroup + "/pod-name"
)

// AgentSandboxCRDs are the CRDs the pool, its template and the claims need, by name.
var AgentSandboxCRDs = []string{
	SandboxesResource + "." + AgentSandboxGroup,
	SandboxTemplatesResource + "." + AgentSandboxExtensionsGroup,
	SandboxWarmPoolsResource + "." + AgentSandboxExtensionsGroup,
	SandboxClaimsResource + "." + AgentSandboxExtensionsGroup,
}
