package addons

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
)

const readyCheckNamespace = "localcluster-ready-check"

// checkWarmPool proves the sandbox chain before anyone relies on it: a pool of
// 1 gets a Sandbox, the Sandbox a pod on a node, the pod Ready, and the pool
// reports readyReplicas 1. It is agent-sandbox's readiness (addons.go), since
// a healthy controller alone does not show that its CRDs and RBAC work.
func checkWarmPool(ctx context.Context, pl *plane.Plane) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: readyCheckNamespace}}
	if _, err := pl.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		_ = pl.Client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), readyCheckNamespace, metav1.DeleteOptions{})
	}()
	if err := pl.WaitFor(ctx, "the default ServiceAccount of "+readyCheckNamespace, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := pl.Client.CoreV1().ServiceAccounts(readyCheckNamespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	for _, o := range []map[string]any{SandboxTemplate("check", pl.IsolatedRuntimeClass), WarmPool("check", "check", 1)} {
		u := &unstructured.Unstructured{Object: o}
		u.SetNamespace(readyCheckNamespace)
		res := gvr.SandboxTemplate
		if u.GetKind() == "SandboxWarmPool" {
			res = gvr.SandboxWarmPool
		}
		if _, err := pl.Dynamic.Resource(res).Namespace(readyCheckNamespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s: %w", u.GetKind(), err)
		}
	}
	return pl.WaitFor(ctx, "a warm pool of 1 to report readyReplicas=1", 90*time.Second, func(ctx context.Context) (bool, error) {
		pool, err := pl.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(readyCheckNamespace).Get(ctx, "check", metav1.GetOptions{})
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

// SandboxTemplate is a minimal template: the sandbox image sleeping, in
// runtimeClass when one is named.
func SandboxTemplate(name, runtimeClass string) map[string]any {
	spec := map[string]any{
		"containers": []any{map[string]any{
			"name": "agent", "image": contract.WarmPodImage,
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

// WarmPool is a SandboxWarmPool of the given size on template.
func WarmPool(name, template string, replicas int64) map[string]any {
	return map[string]any{
		"apiVersion": contract.AgentSandboxExtensionsAPIVersion, "kind": contract.SandboxWarmPoolKind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"replicas": replicas, "sandboxTemplateRef": map[string]any{"name": template}},
	}
}
