package components

import (
	"fmt"

	yamlv2 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/yaml/v2"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// AgentSandboxNamespace is where the release manifest installs the controller.
const AgentSandboxNamespace = "agent-sandbox-system"

// AgentSandboxAPIVersion is the version of every agent-sandbox API the stack and verify use.
const AgentSandboxAPIVersion = "v1beta1"

// AgentSandboxCRDs are the CRDs the pool, its template and verify's claims need.
var AgentSandboxCRDs = []string{
	"sandboxes.agents.x-k8s.io",
	"sandboxtemplates.extensions.agents.x-k8s.io",
	"sandboxwarmpools.extensions.agents.x-k8s.io",
	"sandboxclaims.extensions.agents.x-k8s.io",
}

// AgentSandboxArgs selects installing the pinned release or adopting what the cluster has.
type AgentSandboxArgs struct {
	Mode    string // ModeInstall or ModeAdopt
	Version string // release tag, e.g. v1.0.10
}

// AgentSandbox is the agent-sandbox controller with its extensions.
type AgentSandbox struct {
	pulumi.ResourceState

	ManifestURL pulumi.StringOutput // empty in adopt mode
}

// AgentSandboxManifestURL is the release asset install mode applies.
func AgentSandboxManifestURL(version string) string {
	return fmt.Sprintf("https://github.com/kubernetes-sigs/agent-sandbox/releases/download/%s/sandbox-with-extensions.yaml", version)
}

// NewAgentSandbox applies the release manifest (install) or only reads the CRDs (adopt): the controller
// is a shared install, so adopt never changes it and destroy never deletes it.
func NewAgentSandbox(ctx *pulumi.Context, name string, args *AgentSandboxArgs, opts ...pulumi.ResourceOption) (*AgentSandbox, error) {
	a := &AgentSandbox{}
	if err := ctx.RegisterComponentResource("warmpool:index:AgentSandbox", name, a, opts...); err != nil {
		return nil, err
	}
	switch args.Mode {
	case ModeInstall:
		url := AgentSandboxManifestURL(args.Version)
		a.ManifestURL = pulumi.String(url).ToStringOutput()
		if _, err := yamlv2.NewConfigFile(ctx, name+"-release", &yamlv2.ConfigFileArgs{
			File: pulumi.String(url),
		}, pulumi.Parent(a)); err != nil {
			return nil, err
		}
	case ModeAdopt:
		a.ManifestURL = pulumi.String("").ToStringOutput()
		how := fmt.Sprintf("install it (kubectl apply --server-side -f %s) or set agentSandboxMode=install", AgentSandboxManifestURL(DefaultAgentSandboxVersion))
		need := make([]RequiredCRD, 0, len(AgentSandboxCRDs))
		for _, n := range AgentSandboxCRDs {
			need = append(need, RequiredCRD{Name: n, Version: AgentSandboxAPIVersion})
		}
		if err := requireCRDs(ctx, a, "agent-sandbox", how, need...); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("agent-sandbox mode %q is not %s or %s", args.Mode, ModeInstall, ModeAdopt)
	}
	return a, ctx.RegisterResourceOutputs(a, pulumi.Map{"manifestUrl": a.ManifestURL})
}
