package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
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

// fakeNode is simulated node i: KWOK manages it by its annotation; its pods
// get addresses from its own /24 of the simulated range.
func fakeNode(name string, i int) map[string]any {
	resources := map[string]any{"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"}
	cidr := kwokPodCIDROf(i)
	return map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{
			"name": name,
			// KWOK manages only nodes carrying this annotation.
			"annotations": map[string]any{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			"labels": map[string]any{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok", SandboxNodeLabel: "true",
			},
		},
		"spec": map[string]any{"podCIDR": cidr, "podCIDRs": []any{cidr}},
		// Status is kept on create: capacity is what the scheduler reads.
		"status": map[string]any{
			"capacity": resources, "allocatable": resources,
			"nodeInfo": map[string]any{"kubeletVersion": "kwok-" + contract.KubernetesModule, "operatingSystem": "linux", "architecture": "amd64"},
		},
	}
}
