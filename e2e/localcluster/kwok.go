package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// kwokSettings are what KWOK's command line depends on.
type kwokSettings struct {
	Binary     string
	Kubeconfig string
	Port       int
	// StagesFile is the stages KWOK runs pods and nodes by (kwokStagesFile).
	StagesFile string
}

// kwokSpec is KWOK, which plays the kubelets of the simulated nodes.
func kwokSpec(s kwokSettings) processSpec {
	return processSpec{
		name: "kwok", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			// Without leases the node lifecycle controller marks nodes NotReady after ~50s.
			"--node-lease-duration-seconds=40",
			"--cidr=" + host.KWOKPodCIDR,
			"--node-ip=127.0.0.1",
			"--server-address=127.0.0.1:" + strconv.Itoa(s.Port),
			"--config=" + s.StagesFile,
		},
	}
}

// kwokStagesFile is the default stages file (in KWOK's run-time data), or
// the one edit made of it, written into stateDir.
func kwokStagesFile(dataDir, stateDir string, edit func([]byte) ([]byte, error)) (string, error) {
	defaults := filepath.Join(dataDir, "kwok-stages.yaml")
	if edit == nil {
		return defaults, nil
	}
	b, err := os.ReadFile(defaults)
	if err != nil {
		return "", err
	}
	edited, err := edit(b)
	if err != nil {
		return "", fmt.Errorf("Options.KwokStages: %w", err)
	}
	path := filepath.Join(stateDir, "kwok-stages.yaml")
	return path, os.WriteFile(path, edited, 0o644)
}

// fakeNode is simulated node i: KWOK manages it by its annotation; its pods
// get addresses from its own /24 of the simulated range.
func fakeNode(name string, i int) map[string]any {
	resources := map[string]any{"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"}
	cidr := host.KWOKPodCIDROf(i)
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
