//go:build upgradecheck

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// The stack an earlier version deployed, previewed by this one. Two phases, one per checkout,
// sharing UPGRADE_STATE (a directory): UPGRADE_PHASE=deploy (in the earlier version's checkout,
// this file copied in) starts a local control plane that outlives the test and runs pulumi up of
// that version's program on it; UPGRADE_PHASE=preview (here) attaches to the control plane and
// previews the same stack with this version's program, expecting no change, then destroys the
// stack and stops the control plane.
func TestUpgradeCheck(t *testing.T) {
	state := os.Getenv("UPGRADE_STATE")
	if state == "" {
		t.Fatal("UPGRADE_STATE is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	clusterDir, work := filepath.Join(state, "cluster"), filepath.Join(state, "stack")
	var c *localcluster.Cluster
	var err error
	switch os.Getenv("UPGRADE_PHASE") {
	case "deploy":
		c, err = framework.StartCluster(ctx, localcluster.Options{StateDir: clusterDir, Nodes: 1, OutliveCaller: true, SkipWarmPoolCheck: true})
	case "preview":
		c, err = localcluster.Attach(clusterDir)
	default:
		t.Fatal("UPGRADE_PHASE is deploy or preview")
	}
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := framework.LocalStackConfig(kubeconfig, "http://127.0.0.1:9/demand")
	st, err := framework.NewStack(ctx, work, "upgrade", cfg, framework.NewLogWriter(t))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPGRADE_PHASE") == "deploy" {
		if _, err := framework.Up(ctx, st, framework.NewLogWriter(t)); err != nil {
			t.Fatal(err)
		}
		return
	}
	defer func() { _ = c.Stop() }()
	res, err := st.Preview(ctx, optpreview.ExpectNoChanges(), optpreview.ProgressStreams(framework.NewLogWriter(t)))
	fmt.Printf("preview change summary: %v\n", res.ChangeSummary)
	if err != nil {
		t.Errorf("preview of the earlier version's stack: %v", err)
	}
	if _, err := st.Destroy(ctx); err != nil {
		t.Errorf("destroy: %v", err)
	}
}
