package e2e

import (
	"context"
	"testing"
	"time"
)

// TestLiveLoopControllerFaults takes each controller of the loop down in turn while 2 claims are
// held: KEDA's operator, its metrics adapter, the controller manager (the HPA) and agent-sandbox's
// controller. No node reaches any of them, so the run needs no real node: a control plane of its
// own with simulated nodes, the exporter a local process that KEDA reads by exporterUrl, and the
// same rows and judge as the real node's faults (faults_test.go). It runs in the lane beside the
// real-node lane instead of after the real node's side-by-side stacks.
func TestLiveLoopControllerFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e := newEnv(t, ctx, hpaSyncPeriod(t))
	e.up(ctx, t)
	e.startExporterWithToken(ctx, t)
	e.processFaults(ctx, t, "the loop's controllers", loopControllerFaults)
}
