package localcluster

import (
	"context"
	"fmt"
	"net"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

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
