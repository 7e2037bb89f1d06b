package localcluster

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/nodes"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// realNodes is the cluster's real nodes, or nil without any.
func (c *Cluster) realNodes() *nodes.Real {
	for _, k := range c.kinds {
		if r, ok := k.(*nodes.Real); ok {
			return r
		}
	}
	return nil
}

// ImportImage loads a docker-archive image (one `docker save` or
// go-containerregistry tarball) into every real node's containerd, under the
// references it names: how a locally built image reaches the nodes without a
// registry. Pods find it with imagePullPolicy IfNotPresent.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	k := c.realNodes()
	if k == nil {
		return fmt.Errorf("no real nodes to import %s into (start with RealNodes > 0)", filepath.Base(archive))
	}
	return k.ImportImage(ctx, archive)
}

// LookupClusterDNS resolves name with the cluster DNS (what KEDA and the pods
// see): for tests and for saying what the exporter's URL resolves to.
func (c *Cluster) LookupClusterDNS(ctx context.Context, name string) ([]string, error) {
	if c.realNodes() == nil {
		return nil, fmt.Errorf("no cluster DNS without real nodes")
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(procspec.ClusterDNSAddress, "53"))
	}}
	return r.LookupHost(ctx, name)
}
