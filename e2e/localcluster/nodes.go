package localcluster

import (
	"context"

	"fmt"
)

// nodeKind is one backend of nodes: simulated nodes (KWOK plays their
// kubelets) or real ones (a kubelet, containerd and gVisor on this machine).
// A cluster has one of each kind it was asked for, and both can run together;
// Start calls each kind at its step and teardown undoes them in reverse.
type nodeKind interface {
	// prepare runs before the API server: what the host and the certificates
	// need for these nodes.
	prepare(ctx context.Context, p *pki) error
	// objects are what the nodes add to the bootstrap (Node objects, the
	// RuntimeClasses they serve, the API server's right to their API).
	objects() []map[string]any
	// isolatedRuntimeClass is the RuntimeClass named name as these nodes
	// serve it; the cluster has one, from the kind that runs sandboxes.
	isolatedRuntimeClass(name string) map[string]any
	// start runs the nodes' programs, once the add-ons run, and waits for them.
	start(ctx context.Context, p *pki) error
	// stop ends what the process record does not cover (pods, their mounts)
	// before the processes stop; cleanup undoes the host changes after.
	stop(ctx context.Context)
	cleanup() error
}

// nodeKinds are the backends of a cluster with simulated and real nodes, in
// start order; the last one runs the sandboxes.
func (c *Cluster) nodeKinds(simulated, real int) []nodeKind {
	var kinds []nodeKind
	if simulated > 0 {
		kinds = append(kinds, &simulatedNodes{c: c, count: simulated})
	}
	if real > 0 {
		kinds = append(kinds, &realNodes{c: c})
	}
	return kinds
}

func (c *Cluster) prepareNodes(ctx context.Context, p *pki) error {
	for _, k := range c.kinds {
		if err := k.prepare(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) startNodes(ctx context.Context, p *pki) error {
	for _, k := range c.kinds {
		if err := k.start(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// nodeObjects are every kind's objects and the isolated RuntimeClass (when
// named) of the kind that runs sandboxes: real nodes when there are any,
// since a simulated node has no runsc.
func (c *Cluster) nodeObjects() []map[string]any {
	var objs []map[string]any
	for _, k := range c.kinds {
		objs = append(objs, k.objects()...)
	}
	if c.isolatedRuntimeClass != "" && len(c.kinds) > 0 {
		objs = append(objs, c.kinds[len(c.kinds)-1].isolatedRuntimeClass(c.isolatedRuntimeClass))
	}
	return objs
}

// stopNodes ends what each kind runs beyond the process record, last kind first.
func (c *Cluster) stopNodes(ctx context.Context) {
	for i := len(c.kinds) - 1; i >= 0; i-- {
		c.kinds[i].stop(ctx)
	}
}

// cleanNodes undoes each kind's host changes, last kind first; it runs once
// the processes stopped, since they hold what it removes.
func (c *Cluster) cleanNodes() []error {
	var errs []error
	for i := len(c.kinds) - 1; i >= 0; i-- {
		if err := c.kinds[i].cleanup(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// simulatedNodes are Node objects whose kubelet KWOK plays: pods go Ready
// by its stages, nothing runs.
type simulatedNodes struct {
	c     *Cluster
	count int
}

func (k *simulatedNodes) prepare(context.Context, *pki) error { return nil }

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
		"scheduling": map[string]any{"nodeSelector": map[string]any{SandboxNodeLabel: "true"}},
	}
}

func (k *simulatedNodes) start(context.Context, *pki) error { return k.c.startKWOK(k.c.Kubeconfig) }
func (k *simulatedNodes) stop(context.Context)              {}
func (k *simulatedNodes) cleanup() error                    { return nil }

// realNodes are kubelets on this machine (realnode.go); what they change on
// the host is in the host ledger, which cleanup undoes.
type realNodes struct{ c *Cluster }

func (k *realNodes) prepare(ctx context.Context, p *pki) error {
	if err := k.c.prepareRealNodes(ctx); err != nil {
		return err
	}
	var names []string
	for _, n := range k.c.realNodeList() {
		names = append(names, n.name)
	}
	return p.realNodeCerts(names)
}

func (k *realNodes) objects() []map[string]any { return realNodeObjects() }

func (k *realNodes) isolatedRuntimeClass(name string) map[string]any {
	return realNodeIsolatedRuntimeClass(name)
}

func (k *realNodes) start(ctx context.Context, p *pki) error { return k.c.startRealNodes(ctx, p) }
func (k *realNodes) stop(ctx context.Context)                { k.c.stopRealNodes(ctx) }

func (k *realNodes) cleanup() error {
	if err := cleanHost(k.c.StateDir, k.c.Binaries.Path("kube-proxy")); err != nil {
		return err
	}
	return releaseOwner(k.c.StateDir)
}
