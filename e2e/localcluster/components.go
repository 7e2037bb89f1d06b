package localcluster

import "context"

// The two start steps of Start for Kubernetes' own processes, one after the
// other; every process has its own file (etcd.go, apiserver.go,
// controllermanager.go, scheduler.go). The add-ons' step is in addons.go, the
// nodes' steps in nodes.go.

func (c *Cluster) startAPIServer(ctx context.Context, p *pki) error {
	etcdURL, err := c.startEtcd(ctx)
	if err != nil {
		return err
	}
	return c.startKubeAPIServer(ctx, p, etcdURL)
}

func (c *Cluster) startControllers(ctx context.Context, p *pki) error {
	if err := c.startControllerManager(p); err != nil {
		return err
	}
	return c.startScheduler()
}
