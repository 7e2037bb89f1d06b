package verifier

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// listKinds lets the dynamic fake list these resources in tests.
var listKinds = map[schema.GroupVersionResource]string{
	gvr.SandboxWarmPool: "SandboxWarmPoolList",
	gvr.SandboxClaim:    "SandboxClaimList",
	gvr.Sandbox:         "SandboxList",
	gvr.ScaledObject:    "ScaledObjectList",
}

const (
	projectName    = contract.ProjectName
	labelManagedBy = contract.ManagedByLabel
	labelStack     = contract.StackLabel
	labelPartOf    = contract.PartOfLabel
	labelCreatedBy = contract.ProjectName + "/created-by"
	createdByValue = "verify"

	labelLaunchType = contract.LaunchTypeLabel
	annoPodName     = contract.PodNameAnnotation
	annoKwokNode    = "kwok.x-k8s.io/node"
)

// demandClaimName is the exact name of the i-th claim verify creates (1-based).
func demandClaimName(i int) string { return fmt.Sprintf("demand-%d", i) }

// newDemandClaim builds the claim verify creates: the contract's labels and the
// pool reference, nothing that would force a cold start (env, volumes).
func newDemandClaim(ns, name, pool string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": contract.AgentSandboxExtensionsAPIVersion,
		"kind":       contract.SandboxClaimKind,
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
			"labels": map[string]any{
				labelPartOf:    projectName,
				labelCreatedBy: createdByValue,
			},
		},
		"spec": map[string]any{"warmPoolRef": map[string]any{"name": pool}},
	}}
	return u
}

// poolReading is one read of the pool: spec.replicas is the HPA's decision,
// status.readyReplicas the capacity (printed, never asserted).
type poolReading struct {
	Spec  int64
	Ready *int64
}

func (p poolReading) readyString() string {
	if p.Ready == nil {
		return "<unset>"
	}
	return fmt.Sprint(*p.Ready)
}

// readPool extracts the reading; an absent spec.replicas is an error, not 0,
// because the CRD defaults it and absence means we read something unexpected.
func readPool(u *unstructured.Unstructured) (poolReading, error) {
	spec, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if err != nil {
		return poolReading{}, fmt.Errorf("pool %s: spec.replicas: %w", u.GetName(), err)
	}
	if !found {
		return poolReading{}, fmt.Errorf("pool %s has no spec.replicas", u.GetName())
	}
	r := poolReading{Spec: spec}
	if ready, ok, err := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); err == nil && ok {
		r.Ready = &ready
	}
	return r, nil
}

// claimReady is true when the claim's Ready condition is True. Only its
// presence is used: its lastTransitionTime is the adopted Sandbox's, so it
// cannot time an adoption.
func claimReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// claimSandboxName is status.sandbox.name, the Sandbox the claim holds.
func claimSandboxName(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "sandbox", "name")
	return s
}

// sandboxPodName follows agent-sandbox v0.5.6: the pod is named after the
// Sandbox unless the agents.x-k8s.io/pod-name annotation says otherwise.
func sandboxPodName(sb *unstructured.Unstructured) string {
	if n := sb.GetAnnotations()[annoPodName]; n != "" {
		return n
	}
	return sb.GetName()
}
