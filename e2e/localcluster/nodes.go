package localcluster

import (
	"context"
	"fmt"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// nodeKind is one backend of nodes: simulated nodes (KWOK plays their
// kubelets) or real ones (a kubelet, containerd and gVisor on this machine).
// A cluster has one of each kind it was asked for, and both can run together;
// Start calls each kind at its step (plane.startSteps) and teardown undoes
// them in reverse. Each kind owns its state.
type nodeKind interface {
	// prepare runs before the API server: what the host and the certificates
	// need for these nodes.
	prepare(ctx context.Context) error
	// objects are what the nodes add to the bootstrap (Node objects, the
	// RuntimeClasses they serve, the API server's right to their API).
	objects() []map[string]any
	// isolatedRuntimeClass is the RuntimeClass named name as these nodes
	// serve it; the cluster has one, from the kind that runs sandboxes.
	isolatedRuntimeClass(name string) map[string]any
	// start runs the nodes' processes, once the add-ons run, and waits for them.
	start(ctx context.Context) error
	// stop ends what the process record does not cover (pods, their mounts)
	// before the processes stop; cleanup undoes the host changes after.
	stop(ctx context.Context)
	cleanup() error
}

// nodeKinds are the backends of a cluster with simulated and real nodes, in
// start order; the last one runs the sandboxes.
func nodeKinds(pl *plane, simulated, real int, kwokStages func([]byte) ([]byte, error)) []nodeKind {
	var kinds []nodeKind
	if simulated > 0 {
		kinds = append(kinds, &simulatedNodes{pl: pl, count: simulated, stages: kwokStages})
	}
	if real > 0 {
		kinds = append(kinds, newRealNodes(pl, real))
	}
	return kinds
}

// nodeObjects are every kind's objects and the isolated RuntimeClass (when
// named) of the kind that runs sandboxes: real nodes when there are any,
// since a simulated node has no runsc.
func nodeObjects(kinds []nodeKind, isolatedRuntimeClass string) []map[string]any {
	var objs []map[string]any
	for _, k := range kinds {
		objs = append(objs, k.objects()...)
	}
	if isolatedRuntimeClass != "" && len(kinds) > 0 {
		objs = append(objs, kinds[len(kinds)-1].isolatedRuntimeClass(isolatedRuntimeClass))
	}
	return objs
}

// simulatedNodes are Node objects whose kubelet KWOK plays: pods go Ready
// by its stages (Options.KwokStages edits the default ones), nothing runs.
type simulatedNodes struct {
	pl     *plane
	count  int
	stages func([]byte) ([]byte, error)
}

func (k *simulatedNodes) prepare(context.Context) error { return nil }

func (k *simulatedNodes) objects() []map[string]any {
	var objs []map[string]any
	for i := 0; i < k.count; i++ {
		objs = append(objs, fakeNode(fmt.Sprintf("kwok-node-%d", i), i))
	}
	return objs
}

func (k *simulatedNodes) isolatedRuntimeClass(name string) map[string]any {
	return map[string]any{
		"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata": map[string]any{"name": name},
		// The handler names nothing real: no kubelet runs here.
		"handler":    "local-simulated",
		"scheduling": map[string]any{"nodeSelector": map[string]any{procspec.SandboxNodeLabel: "true"}},
	}
}

func (k *simulatedNodes) start(context.Context) error {
	pl := k.pl
	stages, err := procspec.KWOKStagesFile(pl.bins.DataDir("kwok"), pl.stateDir, k.stages)
	if err != nil {
		return err
	}
	_, err = procspec.KWOK(procspec.KWOKSettings{Binary: pl.bins.Path("kwok"), Kubeconfig: pl.kubeconfig, Port: pl.ports.kwok, StagesFile: stages}).Start(pl.procs)
	return err
}

func (k *simulatedNodes) stop(context.Context) {}
func (k *simulatedNodes) cleanup() error       { return nil }

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
