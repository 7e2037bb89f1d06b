package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// demoNextSteps are the demo's closing commands for this stack, as the demo builds them for a
// control plane on simulated nodes whose exporter is a local process.
func (e *env) demoNextSteps(ctx context.Context, t *testing.T) framework.NextSteps {
	bins, err := toolcache.Ensure(ctx, framework.NewLogWriter(t), toolcache.Kubectl...)
	if err != nil {
		t.Fatal(err)
	}
	return framework.NextSteps{Kubeconfig: e.cluster.Kubeconfig, Kubectl: bins.Path("kubectl"), Namespace: e.ns,
		DemandURL: e.demandURL(), Curl: true, OutputsFile: filepath.Join(e.work, "outputs.json"), StateDir: e.cluster.StateDir}
}

// runAsPrinted runs commands as a newcomer would type them into one shell in the repository's
// root, with no kubectl on PATH (the README's setup installs none), and returns what they print.
func runAsPrinted(ctx context.Context, t *testing.T, hints []framework.Hint) string {
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var script []string
	for _, h := range hints {
		script = append(script, h.Command)
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+pathShadowing(t, "kubectl"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("ran as printed (%s):\n%s\n%s", time.Since(start).Round(time.Second), strings.Join(script, "\n"), out)
	if err != nil {
		t.Fatalf("the demo's commands, run as printed, failed: %v", err)
	}
	return string(out)
}

// pathShadowing is $PATH with a folder in front whose binary fails saying it was used: a command
// that relies on the machine having it fails, as it would on a machine without it.
func pathShadowing(t *testing.T, binary string) string {
	dir := t.TempDir()
	shim := "#!/bin/sh\necho \"" + binary + " from PATH was used: the README's setup installs none\" >&2\nexit 127\n"
	if err := os.WriteFile(filepath.Join(dir, binary), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(filepath.ListSeparator) + os.Getenv("PATH")
}

// demoExploreCommands runs the demo's closing commands that look at the stack, as printed, and
// holds what they print to what the stack is: the pool listed by kubectl, the exporter's count
// from curl, the outputs file, and verify's demand phase passing.
func (e *env) demoExploreCommands(ctx context.Context, t *testing.T) {
	steps := e.demoNextSteps(ctx, t)
	out := runAsPrinted(ctx, t, steps.Explore())
	for what, want := range map[string]string{
		"kubectl's row of the pool":              "sandboxwarmpool.extensions.agents.x-k8s.io/" + e.pool,
		"the exporter's count, from curl":        `"active_claims"`,
		"the outputs file's namespace, from cat": `"namespace": "` + e.ns + `"`,
		"verify's verdict on its demand phase":   "checks passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: %q is not in what the commands printed", what, want)
		}
	}
}

// demoTeardownCommand runs the demo's teardown command as printed and checks the control plane
// is gone: its API server no longer answers and its state directory is removed.
func (e *env) demoTeardownCommand(ctx context.Context, t *testing.T) {
	steps := e.demoNextSteps(ctx, t)
	runAsPrinted(ctx, t, []framework.Hint{steps.Teardown()})
	if _, err := os.Stat(e.cluster.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory %s is still there after the teardown command (%v)", e.cluster.StateDir, err)
	}
	if ok, _ := e.cluster.Running(); ok {
		t.Errorf("the control plane still runs after the teardown command")
	}
	if _, err := e.cluster.Client.Discovery().ServerVersion(); err == nil {
		t.Errorf("the API server still answers after the teardown command")
	}
}
