package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/pulumirun"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// stackRun is what every end-to-end run has: a local control plane, a stack of the program on
// it, and the stack's outputs once upStack has run. Its methods take the t of the (sub)test
// that calls them.
type stackRun struct {
	cluster *localcluster.Cluster
	work    string
	stack   *pulumirun.Stack
	config  map[string]string
	outputs framework.Outputs
	ns      string
	pool    string
}

// startStackRun starts a local control plane of its own (startCluster) and the stack stackName
// on it (newStackRun): what a benchmark that owns its cluster uses.
func startStackRun(t testing.TB, ctx context.Context, opts localcluster.Options, stackName, startHint string, config func(kubeconfig []byte) map[string]string) stackRun {
	work := t.TempDir()
	return newStackRun(t, ctx, startCluster(t, ctx, work, opts, startHint), work, stackName, config)
}

// startCluster starts a local control plane with opts, its state under work, stopped when the
// test ends; startHint is added to a failed start.
func startCluster(t testing.TB, ctx context.Context, work string, opts localcluster.Options, startHint string) *localcluster.Cluster {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		t.Skipf("%s=1: the local control plane was not started; this proves nothing", localcluster.SkipEnv)
	}
	opts.StateDir, opts.Progress = filepath.Join(work, "cluster"), framework.NewLogWriter(t)
	c, err := framework.StartCluster(ctx, opts)
	if err != nil {
		t.Fatalf("%v%s", err, startHint)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs: %s", filepath.Join(c.StateDir, "logs"))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return c
}

// newStackRun is the stack stackName on the control plane c, configured by config from c's
// kubeconfig, its Pulumi state and verify's files under work. Several stacks may share one
// control plane: each has its own work directory and namespace. The caller runs upStack.
func newStackRun(t testing.TB, ctx context.Context, c *localcluster.Cluster, work, stackName string, config func(kubeconfig []byte) map[string]string) stackRun {
	r := stackRun{cluster: c, work: work}
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	r.config = config(kubeconfig)
	if r.stack, err = framework.NewStack(ctx, filepath.Join(r.work, "pulumi"), stackName, r.config, framework.NewLogWriter(t)); err != nil {
		t.Fatal(err)
	}
	return r
}

// upStack runs pulumi up, checks that every output verify reads is there, and writes them to
// outputs.json, where verify reads them.
func (r *stackRun) upStack(ctx context.Context, t testing.TB) {
	out, err := framework.Up(ctx, r.stack, framework.NewLogWriter(t))
	if err != nil {
		t.Fatal(err)
	}
	r.outputs = out
	for _, k := range out.Missing() {
		t.Errorf("stack output %q is missing (verify reads it)", k)
	}
	r.ns, r.pool = out.String("namespace"), out.String("poolName")
	if err := out.WriteFile(filepath.Join(r.work, "outputs.json")); err != nil {
		t.Fatal(err)
	}
}

// runVerify runs the verify binary against the stack's outputs and returns its JSON report
// and exit code; its output is logged and kept as <name>.txt.
func (r *stackRun) runVerify(ctx context.Context, t *testing.T, verifyBin, name string, args ...string) (*report.Report, int) {
	reportPath := filepath.Join(r.work, name+".json")
	cmd := exec.CommandContext(ctx, verifyBin, append([]string{"--outputs-file", filepath.Join(r.work, "outputs.json"),
		"--kubeconfig", r.cluster.Kubeconfig, "--json", reportPath, "--exec-timeout", framework.VerifyExecBound.String()}, args...)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("verify %s (%s):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), out)
	if err := os.WriteFile(filepath.Join(r.work, name+".txt"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("verify: %v", err)
		}
		code = ee.ExitCode()
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{}
	if err := json.Unmarshal(b, rep); err != nil {
		t.Fatalf("verify's JSON report: %v", err)
	}
	return rep, code
}

// createClaim creates a claim on the stack's pool; a failure ends the test.
func (r *stackRun) createClaim(ctx context.Context, t testing.TB, name string) {
	if err := framework.CreateClaim(ctx, r.cluster.Dynamic, r.ns, name, r.pool); err != nil {
		t.Fatal(err)
	}
}

// holdClaims creates the claims and returns what deletes them again (deferred by the caller).
func (r *stackRun) holdClaims(ctx context.Context, t testing.TB, names ...string) (release func()) {
	for _, n := range names {
		r.createClaim(ctx, t, n)
	}
	return func() {
		for _, n := range names {
			r.deleteClaim(ctx, t, n)
		}
	}
}

// deleteClaim deletes a claim by its exact name; a failure is reported and the test goes on.
func (r *stackRun) deleteClaim(ctx context.Context, t testing.TB, name string) {
	if err := framework.DeleteClaim(ctx, r.cluster.Dynamic, r.ns, name); err != nil {
		t.Error(err)
	}
}

// warmBeforeVerify waits until the pool has a warm sandbox Ready, as a user lets up's pool boot
// before running verify: verify itself waits a minute for one, and at the suite's start, with
// every stack's pool booting at once beside the other lanes, a gVisor boot has taken longer.
func (r *stackRun) warmBeforeVerify(ctx context.Context, t *testing.T) {
	start := time.Now()
	framework.Eventually(t, ctx, "a warm sandbox Ready (status.readyReplicas>=1) before verify", framework.SandboxStartBound, func(ctx context.Context) (bool, error) {
		return r.readyReplicasAtLeast(ctx, 1)
	})
	t.Logf("the pool's first warm sandbox was Ready %s after up", time.Since(start).Round(time.Second))
}
