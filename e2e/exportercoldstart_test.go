package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
)

// BenchmarkExporterColdStart measures, on a real node, the exporter's Deployment as `pulumi up`
// creates it: from a new pod's creation (a template change the benchmark makes) to the first
// count that pod serves, for both paths. The container's CPU is capped at its request (a limit
// equal to it), the worst case on a busy node: what the Deployment is guaranteed.
//
//	go test -C e2e -run '^$' -bench ExporterColdStart -benchtime 1x -timeout 90m -v .
func BenchmarkExporterColdStart(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	e := newRealEnv(b, ctx)
	e.upStack(ctx, b)
	e.waitExporterRolledOut(ctx, b, 60*time.Minute)
	archive, err := framework.BuildExporterImage(ctx, framework.NewLogWriter(b), e.work, exporterImageRef)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.cluster.ImportImage(ctx, archive); err != nil {
		b.Fatal(err)
	}
	for _, path := range []struct{ name, image string }{{"image", exporterImageRef}, {"source", ""}} {
		b.Run(path.name, func(b *testing.B) {
			if path.image == "" {
				delete(e.config, "exporterImage")
			} else {
				e.config["exporterImage"] = path.image
			}
			if err := e.stack.SetConfig(ctx, e.config); err != nil {
				b.Fatal(err)
			}
			e.upStack(ctx, b)
			e.waitExporterRolledOut(ctx, b, 60*time.Minute)
			for i := 0; i < b.N; i++ {
				d := e.coldStart(ctx, b, fmt.Sprintf("%s-%d", path.name, i))
				b.ReportMetric(d.Seconds(), "s/first-count")
			}
		})
	}
}

// coldStart caps the exporter's CPU at its request and changes its pod template, then waits for
// the new pod to serve a count; it returns the time from the change to that first count.
func (e *realEnv) coldStart(ctx context.Context, b *testing.B, run string) time.Duration {
	dep, err := e.cluster.Client.AppsV1().Deployments(e.ns).Get(ctx, contract.ExporterName, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cpu := dep.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"bench/run":%q}},"spec":{"containers":[{"name":%q,"resources":{"limits":{"cpu":%q}}}]}}}}`,
		run, contract.ExporterName, cpu)
	start := time.Now()
	if _, err := e.cluster.Client.AppsV1().Deployments(e.ns).Patch(ctx, dep.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		b.Fatal(err)
	}
	var created time.Time
	var cpuLimit string
	framework.Eventually(b, ctx, "the new exporter pod to serve its first count", 60*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, exporterPods)
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Annotations["bench/run"] != run || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
				continue
			}
			created = p.CreationTimestamp.Time
			cpuLimit = p.Spec.Containers[0].Resources.Limits.Cpu().String()
			url := "http://" + p.Status.PodIP + ":" + strconv.Itoa(contract.ExporterPort) + contract.DemandPath
			d, err := framework.Demand(url)
			return err == nil && d.Fresh, err
		}
		return false, fmt.Errorf("no pod of run %s with an address yet", run)
	})
	took := time.Since(start)
	// Lift the cap again: the next `pulumi up` may raise the request above it (the source
	// path asks for more CPU than the image path), which the API server would refuse.
	unpatch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"resources":{"limits":{"cpu":null}}}]}}}}`, contract.ExporterName)
	if _, err := e.cluster.Client.AppsV1().Deployments(e.ns).Patch(ctx, dep.Name, types.StrategicMergePatchType, []byte(unpatch), metav1.PatchOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: first count %s after the template change (pod created %s, CPU limit %s = request)", run, took.Round(100*time.Millisecond), created.Format(time.RFC3339), cpuLimit)
	return took
}
