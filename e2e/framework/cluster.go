package framework

import (
	"context"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// StartCluster starts a local control plane for this product: opts with the
// product's isolated RuntimeClass (contract.RuntimeClassName), which the
// control plane itself does not know.
func StartCluster(ctx context.Context, opts localcluster.Options) (*localcluster.Cluster, error) {
	if opts.IsolatedRuntimeClass == "" {
		opts.IsolatedRuntimeClass = contract.RuntimeClassName
	}
	return localcluster.Start(ctx, opts)
}
