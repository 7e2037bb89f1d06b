package program

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
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

// NewAutoscaledWarmPool takes the program's config keys less ClusterKeys as inputs, in the form
// the CLI hands config over (scalars as text, lists and objects as JSON), and the paths of those
// the caller marked secret (template.env.API_KEY: kept secret; anywhere else: refused). The caller's
// kubernetes provider comes in through opts (pulumi.Providers) and every child inherits it.
// One per stack, as the program is one: its pools input takes several pools, and the children's
// names (those of the program) would collide in a second one, as would the cluster-wide installs.
func NewAutoscaledWarmPool(ctx *pulumi.Context, name string, inputs map[string]string, secrets []string, opts ...pulumi.ResourceOption) (*AutoscaledWarmPool, error) {
	cfg, err := LoadComponentConfig(ctx.Project(), ctx.Stack(), name, inputs, secrets...)
	if err != nil {
		return nil, err
	}
	c := &AutoscaledWarmPool{}
	if err := ctx.RegisterComponentResource(AutoscaledWarmPoolType, name, c, opts...); err != nil {
		return nil, err
	}
	if c.Outputs, err = deploy(ctx, cfg, placement{inCluster: pulumi.Parent(c)}); err != nil {
		return nil, err
	}
	return c, ctx.RegisterResourceOutputs(c, c.Outputs)
}
