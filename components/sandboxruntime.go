package components

import (
	"fmt"

	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	nodev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/node/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/internals"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// SandboxRuntimeArgs says whether the isolated-sandbox RuntimeClass must already exist or is ours to make.
type SandboxRuntimeArgs struct {
	Mode    string // ModeRequire, ModeCreate or ModeShared
	Name    string // the RuntimeClass name the warm pods use
	Handler string // ModeCreate only: the CRI handler
	// NewClusterKubeconfig is the kubeconfig of a cluster this program has just created (nil for
	// one that was there): in require mode the RuntimeClass is first waited for on it, since Auto
	// Mode adds it some time after the cluster answers.
	NewClusterKubeconfig *pulumi.StringOutput
	Scope                Scope
}

// SandboxRuntime is the RuntimeClass the warm pods run with.
type SandboxRuntime struct {
	pulumi.ResourceState

	Name pulumi.StringOutput
	// Installed is the RuntimeClass (read or created), for dependents: see Keda.Installed.
	Installed []pulumi.Resource
	// Overhead is the RuntimeClass's overhead.podFixed (cpu, memory: what the scheduler adds to
	// each of its pods' requests), as the cluster has it; empty when it declares none or the
	// program makes it.
	Overhead pulumi.StringMapOutput
}

// NewSandboxRuntime checks for (require) or creates (create) the RuntimeClass. In require mode it waits
// for the read, so a missing RuntimeClass stops the program before anything else is registered. On a
// cluster this program has just created (create mode, not in a preview) it first waits, within
// RuntimeClassPatience and saying so, for Auto Mode to add the RuntimeClass.
func NewSandboxRuntime(ctx *pulumi.Context, name string, args *SandboxRuntimeArgs, opts ...pulumi.ResourceOption) (*SandboxRuntime, error) {
	r := &SandboxRuntime{Name: pulumi.String(args.Name).ToStringOutput()}
	if err := ctx.RegisterComponentResource("warmpool:index:SandboxRuntime", args.Scope.Name(name), r, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	switch args.Mode {
	case ModeRequire:
		if args.NewClusterKubeconfig != nil && !ctx.DryRun() {
			if err := waitForRuntimeClassOn(ctx, r, *args.NewClusterKubeconfig, args.Name); err != nil {
				return nil, err
			}
		}
		rc, err := nodev1.GetRuntimeClass(ctx, args.Scope.Name(args.Name), pulumi.ID(args.Name), nil, pulumi.Parent(r)) // a read: no alias (crdcheck.go)
		if err != nil {
			return nil, err
		}
		// During a preview of a cluster that does not exist yet the read answers nothing (no error):
		// the check then happens at `up`, still before the pool is created.
		if _, err := internals.UnsafeAwaitOutput(ctx.Context(), rc.ID()); err != nil {
			return nil, Explain(ctx, r, fmt.Errorf("RuntimeClass %q was not found on the cluster (%v). The warm pool's pods run with runtimeClassName %q, "+
				"so they would never start without it. EKS Auto Mode provides it from Kubernetes 1.36 (Nitro Sandboxes); "+
				"on another cluster set runtimeClassMode=create and runtimeClassHandler to the CRI handler that runs sandboxes there",
				args.Name, err, args.Name))
		}
		r.Installed = []pulumi.Resource{rc}
		r.Overhead = rc.Overhead.PodFixed()
	case ModeCreate:
		rc, err := nodev1.NewRuntimeClass(ctx, args.Scope.Name(args.Name), &nodev1.RuntimeClassArgs{
			Metadata: &metav1.ObjectMetaArgs{
				Name:   pulumi.String(args.Name),
				Labels: pulumi.StringMap{contract.ManagedByLabel: pulumi.String(contract.ManagedByValue)},
			},
			Handler: pulumi.String(args.Handler),
		}, args.Scope.Opts(args.Name, pulumi.Parent(r))...)
		if err != nil {
			return nil, err
		}
		r.Installed = []pulumi.Resource{rc}
		r.Overhead = pulumi.StringMap{}.ToStringMapOutput()
	case ModeShared:
		r.Overhead = pulumi.StringMap{}.ToStringMapOutput()
	default:
		return nil, fmt.Errorf("runtime class mode %q is not %s or %s", args.Mode, ModeRequire, ModeCreate)
	}
	return r, ctx.RegisterResourceOutputs(r, pulumi.Map{"name": r.Name})
}

// waitForRuntimeClassOn waits for the RuntimeClass on the new cluster whose kubeconfig is given
// (known once the cluster's endpoint answers: the wait in awscomponents/cluster.go comes first).
func waitForRuntimeClassOn(ctx *pulumi.Context, r *SandboxRuntime, kubeconfig pulumi.StringOutput, name string) error {
	kc, err := internals.UnsafeAwaitOutput(ctx.Context(), kubeconfig)
	if err != nil {
		return err // the cluster's own wait failed, and said why on the cluster
	}
	contents, ok := kc.Value.(string)
	if !kc.Known || !ok {
		return nil // nothing to read yet; the read below decides
	}
	read, err := kubeconfigRuntimeClassReader(contents)
	if err != nil {
		return Explain(ctx, r, err)
	}
	if err := waitForRuntimeClass(ctx.Context(), read, name, RuntimeClassPatience, SayOn(ctx, r)); err != nil {
		return Explain(ctx, r, err)
	}
	return nil
}
