// Package nodes is the backends of a cluster's nodes behind one interface
// (kind.go), each owning its state from preparing the host to cleaning up:
// simulated nodes whose kubelets KWOK plays (simulated.go) and real ones on
// this machine (real.go), with the images real nodes hold (images.go).
package nodes

import (
	"context"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
)

// Kind is one backend of nodes: simulated nodes (KWOK plays their
// kubelets) or real ones (a kubelet, containerd and gVisor on this machine).
// A cluster has one of each kind it was asked for, and both can run together;
// Start calls each kind at its step (start.go) and teardown undoes them in
// reverse. Each kind owns its state.
type Kind interface {
	// Prepare runs before the API server: what the host and the certificates
	// need for these nodes.
	Prepare(ctx context.Context) error
	// Objects are what the nodes add to the bootstrap (Node objects, the
	// RuntimeClasses they serve, the API server's right to their API).
	Objects() []map[string]any
	// IsolatedRuntimeClass is the RuntimeClass named name as these nodes
	// serve it; the cluster has one, from the kind that runs sandboxes.
	IsolatedRuntimeClass(name string) map[string]any
	// Start runs the nodes' processes, once the add-ons run, and waits for them.
	Start(ctx context.Context) error
	// Stop ends what the process record does not cover (pods, their mounts)
	// before the processes stop; Cleanup undoes the host changes after.
	Stop(ctx context.Context)
	Cleanup() error
}

// Kinds are the backends of a cluster with simulated and real nodes, in
// start order; the last one runs the sandboxes.
func Kinds(pl *plane.Plane, simulated, real int, kwokStages func([]byte) ([]byte, error)) []Kind {
	var kinds []Kind
	if simulated > 0 {
		kinds = append(kinds, &Simulated{pl: pl, count: simulated, stages: kwokStages})
	}
	if real > 0 {
		kinds = append(kinds, newReal(pl, real))
	}
	return kinds
}

// Objects are every kind's objects and the isolated RuntimeClass (when
// named) of the kind that runs sandboxes: real nodes when there are any,
// since a simulated node has no runsc.
func Objects(kinds []Kind, isolatedRuntimeClass string) []map[string]any {
	var objs []map[string]any
	for _, k := range kinds {
		objs = append(objs, k.Objects()...)
	}
	if isolatedRuntimeClass != "" && len(kinds) > 0 {
		objs = append(objs, kinds[len(kinds)-1].IsolatedRuntimeClass(isolatedRuntimeClass))
	}
	return objs
}
