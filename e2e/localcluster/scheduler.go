package localcluster

import (
	"path/filepath"
	"strconv"
)

// startScheduler starts kube-scheduler, which binds pods to the simulated nodes.
func (c *Cluster) startScheduler() error {
	sch := filepath.Join(c.StateDir, "scheduler.kubeconfig")
	_, err := c.procs.Start("kube-scheduler", c.Binaries.Path("kube-scheduler"), []string{
		"--kubeconfig=" + sch, "--authentication-kubeconfig=" + sch, "--authorization-kubeconfig=" + sch,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.scheduler),
		"--leader-elect=false", "--v=1",
	})
	return err
}
