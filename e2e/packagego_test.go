package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/pulumirun"
	"warmpool.local/warm-pool-autoscaling-keda/examples/go/teamstack"
)

// The warmpool package from a team's own Go stack (examples/go, on the generated Go SDK), run
// inline through the Automation API: the real CLI and engine, which start the package's plugin
// (built from provider/) for the SDK's remote component and call its Construct. (The CLI cannot
// run a Go project itself here: the Go language host is not on the module proxy.)

// newGoConsumer is stack dev of examples/go on the control plane c with the package's plugin
// installed, its installs adopted and its exporter on the prebuilt image, its state under work.
func newGoConsumer(ctx context.Context, t *testing.T, c *localcluster.Cluster, work string, plugin pulumirun.Plugin) *env {
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pulumirun.New(ctx, pulumirun.Options{
		Output: framework.NewLogWriter(t), WorkDir: filepath.Join(work, "pulumi"),
		ProjectFile: filepath.Join(root, "examples", "go", "Pulumi.yaml"), StackName: "dev", Program: teamstack.Run,
		Config: map[string]string{
			"kubeconfig": string(kubeconfig), "kedaMode": "adopt", "agentSandboxMode": "adopt",
			"isolation": "gvisor", "exporterImage": exporterImageRef,
		},
		Plugins: []pulumirun.Plugin{plugin},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{stackRun: stackRun{cluster: c, work: work, stack: st}}
}

// goConsumerSteps: up, verify's demand phase on what it deployed, destroy. The YAML consumer
// beside it runs every phase on the same component; here the demand phase shows the Go SDK's
// pool following demand, and the control phase's minute is spared the shared node.
func (e *env) goConsumerSteps(verifyBin string, adopted sharedInstall) []step {
	return []step{
		{"pulumi up deploys the component through the Go SDK and passes on every output verify reads", func(ctx context.Context, t *testing.T) {
			e.upStack(ctx, t)
			if e.ns != teamstack.Namespace {
				t.Errorf("output namespace is %q, want %s", e.ns, teamstack.Namespace)
			}
		}},
		{"verify's demand phase passes on what the package deployed", func(ctx context.Context, t *testing.T) {
			e.warmBeforeVerify(ctx, t)
			rep, code := e.runVerify(ctx, t, verifyBin, "verify-go", "--phase", "demand")
			if code != 0 {
				t.Fatalf("verify exited %d on the Go consumer's stack", code)
			}
			checkDemandSteps(t, rep)
		}},
		{"pulumi destroy removes everything in order and leaves shared installs alone", func(ctx context.Context, t *testing.T) { e.destroy(ctx, t, adopted) }},
	}
}
