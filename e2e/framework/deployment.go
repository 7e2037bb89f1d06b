package framework

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WaitDeploymentAvailable waits until the Deployment's current template has all its replicas
// updated and available; the error says what was last seen.
func WaitDeploymentAvailable(ctx context.Context, client kubernetes.Interface, ns, name string, timeout time.Duration) error {
	return EventuallyErr(ctx, fmt.Sprintf("deployment %s/%s available", ns, name), timeout, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		s := d.Status
		if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
			return false, fmt.Errorf("replicas %d updated %d available %d of %d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want)
		}
		return true, nil
	})
}
