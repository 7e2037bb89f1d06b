package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
)

// TestLiveSimulatedNodeEndToEnd runs what needs no real node, on control planes of their own with
// simulated nodes, in the lane beside the real node's, so the real-node lane does not wait for it.
// Side by side:
//   - the loop's controllers down in turn while 2 claims are held: KEDA's operator, its metrics
//     adapter, the controller manager (the HPA) and agent-sandbox's controller. No node reaches
//     any of them; the stack's exporter is a local process KEDA reads by exporterUrl, and the
//     rows and judge are the real node's faults' (faults_test.go);
//   - bad input on the same control plane: nine configs that preview and up must refuse,
//     creating nothing (nothing the faults take down is in their way);
//   - on a second control plane, the stack whose exporter is a local process and its faults
//     (stopped, restarted while its path to the API is cut, its token rotated), which the
//     controllers' faults would confound: they read KEDA and the HPA following the exporter.
func TestLiveSimulatedNodeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	hpaSync := hpaSyncPeriod(t)
	faults := newEnv(t, ctx, hpaSync)
	kubeconfig, err := os.ReadFile(faults.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	local := newEnv(t, ctx, hpaSync)
	adopted := snapshotSharedInstalls(t, ctx, local.cluster)
	sideBySide(ctx, t, 3, []step{
		{"the loop's controllers down in turn while claims are held", func(ctx context.Context, t *testing.T) {
			faults.up(ctx, t)
			faults.startExporterWithToken(ctx, t)
			faults.processFaults(ctx, t, "the loop's controllers", loopControllerFaults)
		}},
		{"bad input", func(ctx context.Context, t *testing.T) {
			badInput(ctx, t, faults.cluster, filepath.Join(faults.work, "bad-input"), framework.LocalStackConfig(kubeconfig, faults.demandURL()))
		}},
		{"the exporter as a local process, on a control plane of its own", func(ctx context.Context, t *testing.T) {
			runSteps(ctx, t, local.localExporterSteps(adopted))
		}},
	})
}
