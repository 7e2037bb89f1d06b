package localcluster

import (
	"path/filepath"
	"strconv"
)

// startKWOK starts KWOK, which plays the kubelets of the simulated nodes.
func (c *Cluster) startKWOK(admin string) error {
	_, err := c.startProcess("kwok", c.Binaries.Path("kwok"), []string{
		"--kubeconfig=" + admin,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		// Without leases the node lifecycle controller marks nodes NotReady after ~50s.
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports.kwok),
		"--config=" + filepath.Join(c.Binaries.DataDir("kwok"), "kwok-stages.yaml"),
	})
	return err
}
