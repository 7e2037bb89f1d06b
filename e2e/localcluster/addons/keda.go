package addons

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// kedaAPIObjects are KEDA's namespace and how the aggregator reaches its
// metrics adapter, a process on loopback.
func kedaAPIObjects(pl *plane.Plane, p *pki.PKI) ([]map[string]any, error) {
	kedaCAPEM, err := os.ReadFile(p.Path(pki.KEDACA + ".crt"))
	if err != nil {
		return nil, err
	}
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "keda"}},
		// The aggregator resolves an ExternalName service to externalName:port,
		// which is how it reaches the adapter, a process on loopback.
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "keda-metrics-apiserver", "namespace": "keda"},
			"spec": map[string]any{"type": "ExternalName", "externalName": "localhost",
				"ports": []any{map[string]any{"name": "https", "port": pl.Ports.AdapterSecure, "protocol": "TCP"}}},
		},
		{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "v1beta1.external.metrics.k8s.io"},
			"spec": map[string]any{
				"group": "external.metrics.k8s.io", "version": "v1beta1",
				"service":              map[string]any{"name": "keda-metrics-apiserver", "namespace": "keda", "port": pl.Ports.AdapterSecure},
				"caBundle":             base64.StdEncoding.EncodeToString(kedaCAPEM),
				"groupPriorityMinimum": 100, "versionPriority": 100,
			},
		},
	}, nil
}

// kedaAPIServiceAvailable waits for the aggregator to call KEDA's metrics
// adapter Available.
func kedaAPIServiceAvailable(ctx context.Context, pl *plane.Plane) error {
	return pl.WaitFor(ctx, "APIService v1beta1.external.metrics.k8s.io (KEDA's metrics adapter) to be Available", 90*time.Second, func(ctx context.Context) (bool, error) {
		if p := pl.Procs.Get("keda-adapter"); p != nil && p.Exited() {
			return false, poll.Stop(fmt.Errorf("it exits 0 on start-up errors: %w", p.ExitedError()))
		}
		a, err := pl.Dynamic.Resource(plane.APIServiceGVR).Get(ctx, "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !plane.ConditionTrue(a, "Available") {
			return false, fmt.Errorf("APIService not Available: %v", a.Object["status"])
		}
		return true, nil
	})
}
