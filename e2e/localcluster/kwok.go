package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// startKWOK starts KWOK, which plays the kubelets of the simulated nodes.
func (c *Cluster) startKWOK(admin string) error {
	stages, err := c.kwokStagesFile()
	if err != nil {
		return err
	}
	_, err = c.procs.Start("kwok", c.Binaries.Path("kwok"), []string{
		"--kubeconfig=" + admin,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		// Without leases the node lifecycle controller marks nodes NotReady after ~50s.
		"--node-lease-duration-seconds=40",
		"--cidr=" + kwokPodCIDR,
		"--node-ip=127.0.0.1",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports.kwok),
		"--config=" + stages,
	})
	return err
}

// kwokStagesFile is the default stages file, or the one Options.KwokStages
// made of it (written into the state directory).
func (c *Cluster) kwokStagesFile() (string, error) {
	defaults := filepath.Join(c.Binaries.DataDir("kwok"), "kwok-stages.yaml")
	if c.kwokStages == nil {
		return defaults, nil
	}
	b, err := os.ReadFile(defaults)
	if err != nil {
		return "", err
	}
	edited, err := c.kwokStages(b)
	if err != nil {
		return "", fmt.Errorf("Options.KwokStages: %w", err)
	}
	path := filepath.Join(c.StateDir, "kwok-stages.yaml")
	return path, os.WriteFile(path, edited, 0o644)
}
