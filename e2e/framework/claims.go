package framework

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// NewClaim is a SandboxClaim of the warm pool pool, with labels (nil for none).
func NewClaim(name, pool string, labels map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": contract.AgentSandboxExtensionsAPIVersion, "kind": contract.SandboxClaimKind,
		"metadata": meta,
		"spec":     map[string]any{"warmPoolRef": map[string]any{"name": pool}},
	}}
}

// CreateClaim creates a claim of pool in ns.
func CreateClaim(ctx context.Context, dyn dynamic.Interface, ns, name, pool string) error {
	if _, err := dyn.Resource(gvr.SandboxClaim).Namespace(ns).Create(ctx, NewClaim(name, pool, nil), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating claim %s/%s: %w", ns, name, err)
	}
	return nil
}

// DeleteClaim deletes the claim by its exact name; one already gone is not an error.
func DeleteClaim(ctx context.Context, dyn dynamic.Interface, ns, name string) error {
	err := dyn.Resource(gvr.SandboxClaim).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting claim %s/%s: %w", ns, name, err)
	}
	return nil
}
