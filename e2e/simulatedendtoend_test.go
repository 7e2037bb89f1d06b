package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/framework"
)

// TestLiveSimulatedNodeEndToEnd runs what needs no real node on a control plane of its own with
// simulated nodes, in the lane beside the real node's, so the real-node lane does not wait for it:
//   - the loop's controllers down in turn while 2 claims are held: KEDA's operator, its metrics
//     adapter, the controller manager (the HPA) and agent-sandbox's controller. No node reaches
//     any of them; the stack's exporter is a local process KEDA reads by exporterUrl, and the
//     rows and judge are the real node's faults' (faults_test.go);
//   - bad input: nine configs that preview and up must refuse, creating nothing.
//
// They share no part the other takes down, so they run side by side.
func TestLiveSimulatedNodeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, hpaSyncPeriod(t))
	kubeconfig, err := os.ReadFile(e.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sideBySide(ctx, t, 2, []step{
		{"the loop's controllers down in turn while claims are held", func(ctx context.Context, t *testing.T) {
			e.up(ctx, t)
			e.startExporterWithToken(ctx, t)
			e.processFaults(ctx, t, "the loop's controllers", loopControllerFaults)
		}},
		{"bad input", func(ctx context.Context, t *testing.T) {
			badInput(ctx, t, e.cluster, filepath.Join(e.work, "bad-input"), framework.LocalStackConfig(kubeconfig, e.demandURL()))
		}},
	})
}
