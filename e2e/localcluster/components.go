package localcluster

import "context"

// The three start steps of Start for the control plane's processes, one after
// the other; every process has its own file (etcd.go, apiserver.go,
// controllermanager.go, scheduler.go, agentsandbox.go, keda.go). The nodes'
// steps are in nodes.go.

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

func (c *Cluster) startAddons(ctx context.Context, p *pki) error {
	admin := c.Kubeconfig
	if err := c.startAgentSandboxController(admin); err != nil {
		return err
	}
	if c.realNodes > 0 {
		if err := c.startClusterDNS(ctx); err != nil {
			return err
		}
	}
	return c.startKEDA(p, admin)
}
