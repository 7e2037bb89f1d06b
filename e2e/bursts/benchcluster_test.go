package bursts

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// benchCluster is the control plane a replay against the live loop runs on, with what each
// such run needs beside it: the recorder watching the sandboxes, claims and pools, and the
// exporter's binary.
type benchCluster struct {
	c           *localcluster.Cluster
	rec         *Recorder
	exporterBin string
	stop        func()
}

// startBenchCluster starts a control plane in work/cluster with opts (the HPA syncing as on
// EKS, the harness's boot delay), its recorder and the exporter built into work. stop stops it
// and removes work, unless the run failed: then both are kept for a look. With keepLogs, the
// control plane's logs (every process's: Karpenter's decisions, the scheduler's) are copied
// there first, whatever the outcome.
func startBenchCluster(tb testing.TB, ctx context.Context, work, keepLogs string, opts localcluster.Options) benchCluster {
	tb.Helper()
	opts.StateDir, opts.HPASyncPeriod = filepath.Join(work, "cluster"), replay.HPASyncPeriod
	opts.KwokStages, opts.Progress = bootDelay.Stages, prefixed("localcluster")
	c, err := framework.StartCluster(ctx, opts)
	if err != nil {
		tb.Fatal(err)
	}
	bc := benchCluster{c: c}
	bc.stop = func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stopping the control plane: %v", err)
		}
		if keepLogs != "" {
			if err := os.CopyFS(keepLogs, os.DirFS(filepath.Join(c.StateDir, "logs"))); err != nil {
				tb.Errorf("keeping the control plane's logs: %v", err)
			} else {
				tb.Logf("the control plane's logs are in %s", keepLogs)
			}
		}
		if tb.Failed() {
			tb.Logf("kept for a look: the control plane's logs in %s, the exporters' in %s", filepath.Join(c.StateDir, "logs"), work)
			return
		}
		_ = os.RemoveAll(work)
	}
	bc.rec = NewRecorder()
	if !bc.rec.Start(ctx, c.Dynamic) {
		bc.stop()
		tb.Fatal("the sandbox, claim and pool informers never synced")
	}
	if bc.exporterBin, err = framework.GoBuild(io.Discard, work, framework.ExporterCommand); err != nil {
		bc.stop()
		tb.Fatalf("building the exporter: %v", err)
	}
	return bc
}
