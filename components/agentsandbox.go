package components

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// AgentSandboxArgs selects installing the pinned release or adopting what the cluster has.
type AgentSandboxArgs struct {
	Mode    string // ModeInstall, ModeAdopt or ModeShared
	Version string // release tag, e.g. v1.0.10
	Scope   Scope
}

// AgentSandbox is the agent-sandbox controller with its extensions.
type AgentSandbox struct {
	pulumi.ResourceState

	ManifestURL pulumi.StringOutput // empty in adopt mode
	// Installed is what a dependent that the controller must outlive depends on: the release
	// manifest's ConfigFile (install), a remote component whose resources (the controller's
	// Deployment, the CRDs, its RBAC) the engine counts as dependencies of whatever depends on it,
	// or the CRD reads (adopt). See Keda.Installed for why not the component itself.
	Installed []pulumi.Resource
}

// NewAgentSandbox applies the release manifest (install) or only reads the CRDs (adopt): the controller
// is a shared install, so adopt never changes it and destroy never deletes it.
func NewAgentSandbox(ctx *pulumi.Context, name string, args *AgentSandboxArgs, opts ...pulumi.ResourceOption) (*AgentSandbox, error) {
	a := &AgentSandbox{}
	if err := ctx.RegisterComponentResource("warmpool:index:AgentSandbox", args.Scope.Name(name), a, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	switch args.Mode {
	case ModeInstall:
		url := contract.AgentSandboxManifestURL(args.Version)
		a.ManifestURL = pulumi.String(url).ToStringOutput()
		release, err := newConfigFile(ctx, args.Scope.Name(name+"-release"), url, args.Scope.Opts(name+"-release", pulumi.Parent(a))...)
		if err != nil {
			return nil, err
		}
		a.Installed = []pulumi.Resource{release}
	case ModeAdopt:
		a.ManifestURL = pulumi.String("").ToStringOutput()
		how := fmt.Sprintf("install it (kubectl apply --server-side -f %s) or set agentSandboxMode=install", contract.AgentSandboxManifestURL(contract.AgentSandboxRelease))
		need := make([]RequiredCRD, 0, len(contract.AgentSandboxCRDs))
		for _, n := range contract.AgentSandboxCRDs {
			need = append(need, RequiredCRD{Name: n, Version: contract.AgentSandboxVersion})
		}
		reads, err := requireCRDs(ctx, args.Scope, a, "agent-sandbox", how, need...)
		if err != nil {
			return nil, err
		}
		a.Installed = reads
	case ModeShared:
		a.ManifestURL = pulumi.String("").ToStringOutput()
	default:
		return nil, fmt.Errorf("agent-sandbox mode %q is not %s or %s", args.Mode, ModeInstall, ModeAdopt)
	}
	return a, ctx.RegisterResourceOutputs(a, pulumi.Map{"manifestUrl": a.ManifestURL})
}
