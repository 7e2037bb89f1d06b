package localcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

const readyCheckNamespace = "localcluster-ready-check"

// waitReady waits for the nodes, then each add-on's own readiness.
func (pl *plane) waitReady(ctx context.Context) error {
	if err := pl.waitFor(ctx, "the nodes to be Ready", 90*time.Second, pl.nodesReady()); err != nil {
		return err
	}
	return pl.addonsReady(ctx)
}

// checkWarmPool proves the sandbox chain before anyone relies on it: a pool of
// 1 gets a Sandbox, the Sandbox a pod on a node, the pod Ready, and the pool
// reports readyReplicas 1. It is agent-sandbox's readiness (addons.go), since
// a healthy controller alone does not show that its CRDs and RBAC work.
func (pl *plane) checkWarmPool(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: readyCheckNamespace}}
	if _, err := pl.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		_ = pl.client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), readyCheckNamespace, metav1.DeleteOptions{})
	}()
	if err := pl.waitFor(ctx, "the default ServiceAccount of "+readyCheckNamespace, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := pl.client.CoreV1().ServiceAccounts(readyCheckNamespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	for _, o := range []map[string]any{sandboxTemplate("check", pl.isolatedRuntimeClass), warmPool("check", "check", 1)} {
		u := &unstructured.Unstructured{Object: o}
		u.SetNamespace(readyCheckNamespace)
		res := gvr.SandboxTemplate
		if u.GetKind() == "SandboxWarmPool" {
			res = gvr.SandboxWarmPool
		}
		if _, err := pl.dynamic.Resource(res).Namespace(readyCheckNamespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s: %w", u.GetKind(), err)
		}
	}
	return pl.waitFor(ctx, "a warm pool of 1 to report readyReplicas=1", 90*time.Second, func(ctx context.Context) (bool, error) {
		pool, err := pl.dynamic.Resource(gvr.SandboxWarmPool).Namespace(readyCheckNamespace).Get(ctx, "check", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n, _, _ := unstructured.NestedInt64(pool.Object, "status", "readyReplicas")
		if n != 1 {
			return false, fmt.Errorf("status.readyReplicas=%d", n)
		}
		return true, nil
	})
}

// sandboxTemplate is a minimal template: the sandbox image sleeping, in
// runtimeClass when one is named.
func sandboxTemplate(name, runtimeClass string) map[string]any {
	spec := map[string]any{
		"containers": []any{map[string]any{
			"name": "agent", "image": SandboxImage,
			"command": []any{"sleep", "infinity"},
		}},
	}
	if runtimeClass != "" {
		spec["runtimeClassName"] = runtimeClass
	}
	return map[string]any{
		"apiVersion": contract.AgentSandboxExtensionsAPIVersion, "kind": contract.SandboxTemplateKind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"podTemplate": map[string]any{"spec": spec}},
	}
}

// warmPool is a SandboxWarmPool of the given size on template.
func warmPool(name, template string, replicas int64) map[string]any {
	return map[string]any{
		"apiVersion": contract.AgentSandboxExtensionsAPIVersion, "kind": contract.SandboxWarmPoolKind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"replicas": replicas, "sandboxTemplateRef": map[string]any{"name": template}},
	}
}

// nodesReady reads whether the named nodes (every node when none is named)
// are Ready; a failed read or a node not Ready yet is the error a timed-out
// wait reports.
func (pl *plane) nodesReady(names ...string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		nodes, err := pl.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := map[string]bool{}
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready[n.Name] = true
				}
			}
			if len(names) == 0 && !ready[n.Name] {
				return false, fmt.Errorf("node %s is not Ready yet", n.Name)
			}
		}
		if len(nodes.Items) == 0 {
			return false, errors.New("no Node objects yet")
		}
		for _, name := range names {
			if !ready[name] {
				return false, fmt.Errorf("node %s is not Ready yet (or not registered)", name)
			}
		}
		return true, nil
	}
}

// waitFor polls cond, saying what it waits for, and fails with that
// description when the timeout passes. A process of the control plane that
// exits while waiting fails the wait at once.
func (pl *plane) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	pl.say("waiting up to %s for %s", timeout, what)
	start := time.Now()
	err := poll.Until(ctx, timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if ok, dead := pl.procs.Running(); !ok {
			return false, poll.Stop(pl.procs.ExitedError(dead[0]))
		}
		return cond(ctx)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	pl.say("%s: done in %s", what, time.Since(start).Round(10*time.Millisecond))
	return nil
}
