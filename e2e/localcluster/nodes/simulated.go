package nodes

import (
	"context"
	"fmt"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// Simulated are Node objects whose kubelet KWOK plays: pods go Ready
// by its stages (Options.KwokStages edits the default ones), nothing runs.
type Simulated struct {
	pl     *plane.Plane
	count  int
	stages func([]byte) ([]byte, error)
}

func (k *Simulated) Prepare(context.Context) error { return nil }

func (k *Simulated) Objects() []map[string]any {
	var objs []map[string]any
	for i := 0; i < k.count; i++ {
		objs = append(objs, fakeNode(fmt.Sprintf("kwok-node-%d", i), i))
	}
	return objs
}

func (k *Simulated) IsolatedRuntimeClass(name string) map[string]any {
	return map[string]any{
		"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata": map[string]any{"name": name},
		// The handler names nothing real: no kubelet runs here.
		"handler":    "local-simulated",
		"scheduling": map[string]any{"nodeSelector": map[string]any{procspec.SandboxNodeLabel: "true"}},
	}
}

func (k *Simulated) Start(context.Context) error {
	pl := k.pl
	stages, err := procspec.KWOKStagesFile(pl.Bins.DataDir("kwok"), pl.StateDir, k.stages)
	if err != nil {
		return err
	}
	_, err = procspec.KWOK(procspec.KWOKSettings{Binary: pl.Bins.Path("kwok"), Kubeconfig: pl.Kubeconfig, Port: pl.Ports.KWOK, StagesFile: stages}).Start(pl.Procs)
	return err
}

func (k *Simulated) Stop(context.Context) {}

func (k *Simulated) Cleanup() error { return nil }

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
				"type": "kwok", procspec.SandboxNodeLabel: "true",
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
