package program

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// AutoscaledWarmPoolType is the package's component (provider/): the program without its
// cluster, on a cluster the caller already has.
const AutoscaledWarmPoolType = "warmpool:index:AutoscaledWarmPool"

// AutoscaledWarmPool is what the program deploys in a cluster (the runtime class check,
// agent-sandbox, KEDA, the pools, the exporter, the autoscalers, the monitoring), as one
// component on the cluster the caller's kubernetes provider reaches.
type AutoscaledWarmPool struct {
	pulumi.ResourceState

	// Outputs are the program's stack outputs less the cluster's (clusterName, kubeconfig),
	// under the same names, so verify reads a caller's stack that passes them on.
	Outputs pulumi.Map
}

// NewAutoscaledWarmPool takes the program's config keys less ClusterKeys as inputs
// (ComponentInputs: their values, the paths marked secret, those not known yet). The caller's
// kubernetes provider comes in through opts (pulumi.Providers) and every child inherits it.
// It is a component on its own; Stacks.NewAutoscaledWarmPool checks it against the others of its
// stack (the plugin's way).
func NewAutoscaledWarmPool(ctx *pulumi.Context, name string, in ComponentInputs, opts ...pulumi.ResourceOption) (*AutoscaledWarmPool, error) {
	return new(Stacks).NewAutoscaledWarmPool(ctx, name, in, opts...)
}

// newAutoscaledWarmPool registers the component and deploys into it, its resources named after
// it (components.Scope), the installs in shared adopted from another component of its stack.
func newAutoscaledWarmPool(ctx *pulumi.Context, name string, cfg *Config, shared map[install]bool, opts ...pulumi.ResourceOption) (*AutoscaledWarmPool, error) {
	c := &AutoscaledWarmPool{}
	if err := ctx.RegisterComponentResource(AutoscaledWarmPoolType, name, c, opts...); err != nil {
		return nil, err
	}
	var err error
	if c.Outputs, err = deploy(ctx, cfg, placement{inCluster: pulumi.Parent(c), scope: components.Scope(name), shared: shared}); err != nil {
		return nil, err
	}
	return c, ctx.RegisterResourceOutputs(c, c.Outputs)
}
