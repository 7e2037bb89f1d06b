package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/framework"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/pulumirun"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/toolcache"
	"github.com/warmpool/warm-pool-autoscaling-keda/program"
	"github.com/warmpool/warm-pool-autoscaling-keda/verify/report"
)

// The warmpool package from a team's own YAML stack (examples/yaml/Pulumi.yaml), run with the
// real Pulumi CLI and the YAML language host, the package's plugin built from provider/.

// yamlConsumerNamespace is the namespace examples/yaml gives its pool.
const yamlConsumerNamespace = "team-sandboxes"

// yamlConsumer is examples/yaml as a project of its own, its state and PULUMI_HOME under work.
type yamlConsumer struct {
	cluster *localcluster.Cluster
	work    string
	project string // the project's directory
	pulumi  string // the CLI
	env     []string
}

// newYAMLConsumer builds the plugin, installs the Kubernetes provider and the YAML language host
// in a PULUMI_HOME of its own, and makes stack dev of examples/yaml on the control plane c, its
// installs adopted and its exporter on the prebuilt image.
func newYAMLConsumer(ctx context.Context, t *testing.T, c *localcluster.Cluster, work string) *yamlConsumer {
	bins, err := toolcache.Ensure(ctx, framework.NewLogWriter(t), append(toolcache.Pulumi, toolcache.PulumiYAML...)...)
	if err != nil {
		t.Fatal(err)
	}
	built := goBuild(t, work, framework.Module+"/provider")
	pluginDir := filepath.Join(work, "plugin")
	if err := os.MkdirAll(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(built, filepath.Join(pluginDir, "pulumi-resource-warmpool")); err != nil {
		t.Fatal(err)
	}
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(root, "examples", "yaml", "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y := &yamlConsumer{cluster: c, work: work, project: filepath.Join(work, "project"), pulumi: bins.Path("pulumi")}
	// What `pulumi package add` arranges from the repository, here from the plugin just built.
	project := string(example) + fmt.Sprintf("plugins:\n  providers:\n    - name: warmpool\n      path: %s\n", pluginDir)
	for _, d := range []string{y.project, filepath.Join(work, "home"), filepath.Join(work, "state"), filepath.Join(work, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFileAtomic(t, filepath.Join(y.project, "Pulumi.yaml"), project)
	// The CLI finds a bundled language host beside itself or on PATH ("plugin install" refuses it).
	y.env = append(os.Environ(), "PATH="+filepath.Dir(bins.Path("pulumi-language-yaml"))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PULUMI_HOME="+filepath.Join(work, "home"), "PULUMI_BACKEND_URL=file://"+filepath.Join(work, "state"),
		"PULUMI_CONFIG_PASSPHRASE="+pulumirun.Passphrase, "PULUMI_SKIP_UPDATE_CHECK=true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true", "TMPDIR="+filepath.Join(work, "tmp"))
	y.must(ctx, t, "plugin", "install", "resource", "kubernetes", toolcache.ProviderVersion, "--file", bins.Path("pulumi-resource-kubernetes"))
	y.must(ctx, t, "stack", "init", "dev")
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	y.must(ctx, t, "config", "set", "--secret", "kubeconfig", string(kubeconfig))
	for k, v := range map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt", "isolation": "gvisor", "exporterImage": exporterImageRef} {
		y.must(ctx, t, "config", "set", k, v)
	}
	return y
}

// run runs the CLI in the project and returns its combined output; the output is logged.
func (y *yamlConsumer) run(ctx context.Context, t *testing.T, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, y.pulumi, append(args, "--non-interactive")...)
	cmd.Dir, cmd.Env = y.project, y.env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	shown := strings.Join(args, " ")
	if len(args) > 3 && args[0] == "config" {
		shown = strings.Join(args[:len(args)-1], " ") + " ..."
	}
	t.Logf("pulumi %s (%s):\n%s", shown, time.Since(start).Round(time.Second), out)
	return string(out), err
}

func (y *yamlConsumer) must(ctx context.Context, t *testing.T, args ...string) string {
	out, err := y.run(ctx, t, args...)
	if err != nil {
		t.Fatalf("pulumi %s: %v", args[0], err)
	}
	return out
}

// steps: a bad input refused, up, verify on what it deployed, destroy.
func (y *yamlConsumer) steps(verifyBin string, adopted sharedInstall) []step {
	return []step{
		{"pulumi preview of a bad input fails with the program's message, naming the input, and creates nothing", y.badInputRefused},
		{"pulumi preview without the kubernetes provider fails saying so, never reaching for an ambient kubeconfig", y.noProviderRefused},
		{"pulumi up deploys the component and passes on every output verify reads", y.up},
		{"verify passes on what the package deployed", func(ctx context.Context, t *testing.T) {
			r := &stackRun{cluster: y.cluster, work: y.work}
			rep, code := r.runVerify(ctx, t, verifyBin, "verify-yaml")
			if code != 0 {
				t.Fatalf("verify exited %d on the YAML consumer's stack", code)
			}
			passed := 0
			for _, c := range rep.Checks {
				if c.Status == report.Pass {
					passed++
				}
			}
			if passed == 0 {
				t.Fatalf("verify's report holds no passed check")
			}
			checkScaleSteps(t, rep)
			t.Logf("verify: %d checks passed on the YAML consumer's stack", passed)
		}},
		{"pulumi destroy leaves nothing of the stack and the shared installs as they were", func(ctx context.Context, t *testing.T) { y.destroy(ctx, t, adopted) }},
	}
}

func (y *yamlConsumer) badInputRefused(ctx context.Context, t *testing.T) {
	out := y.previewEdited(ctx, t, "      minReplicas: 1\n", "      minReplicas: 4\n")
	for _, want := range []string{`invalid inputs of ` + program.AutoscaledWarmPoolType + ` "sandboxes"`, "minReplicas (4) is greater than maxReplicas (3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("pulumi preview's output does not say %q", want)
		}
	}
}

// previewEdited runs pulumi preview on the project with one edit made (restored after) and
// returns its output; the edit must change the project, and the preview must fail.
func (y *yamlConsumer) previewEdited(ctx context.Context, t *testing.T, from, to string) string {
	good, err := os.ReadFile(filepath.Join(y.project, "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(good), from, to, 1)
	if edited == string(good) {
		t.Fatalf("examples/yaml has no %q to edit", from)
	}
	writeFileAtomic(t, filepath.Join(y.project, "Pulumi.yaml"), edited)
	defer writeFileAtomic(t, filepath.Join(y.project, "Pulumi.yaml"), string(good))
	out, err := y.run(ctx, t, "preview")
	if err == nil {
		t.Fatalf("pulumi preview passed with %q made %q", from, to)
	}
	if _, err := y.cluster.Client.CoreV1().Namespaces().Get(ctx, yamlConsumerNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the refused preview: %v (want not found)", yamlConsumerNamespace, err)
	}
	return out
}

func (y *yamlConsumer) noProviderRefused(ctx context.Context, t *testing.T) {
	out := y.previewEdited(ctx, t, "    options:\n      providers:\n        - ${cluster}\n", "")
	if want := `"sandboxes" has no kubernetes provider: pass your cluster's in its providers option`; !strings.Contains(out, want) {
		t.Errorf("pulumi preview's output does not say %q", want)
	}
}

func (y *yamlConsumer) up(ctx context.Context, t *testing.T) {
	y.must(ctx, t, "up", "--yes")
	cmd := exec.CommandContext(ctx, y.pulumi, "stack", "output", "--json", "--show-secrets")
	cmd.Dir, cmd.Env = y.project, y.env
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("pulumi stack output: %v", err)
	}
	var outputs map[string]any
	if err := json.Unmarshal(b, &outputs); err != nil {
		t.Fatalf("pulumi stack output: %v", err)
	}
	for _, k := range framework.OutputKeys {
		if _, ok := outputs[k]; !ok {
			t.Errorf("stack output %q is missing (verify reads it)", k)
		}
	}
	if ns := outputs["namespace"]; ns != yamlConsumerNamespace {
		t.Errorf("output namespace is %v, want %s", ns, yamlConsumerNamespace)
	}
	if err := os.WriteFile(filepath.Join(y.work, "outputs.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The component's children were created through the caller's provider, in the cluster.
	if _, err := y.cluster.Client.CoreV1().Namespaces().Get(ctx, yamlConsumerNamespace, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace %s after up: %v", yamlConsumerNamespace, err)
	}
}

func (y *yamlConsumer) destroy(ctx context.Context, t *testing.T, adopted sharedInstall) {
	y.must(ctx, t, "destroy", "--yes")
	framework.Eventually(t, ctx, "namespace "+yamlConsumerNamespace+" to be gone", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := y.cluster.Client.CoreV1().Namespaces().Get(ctx, yamlConsumerNamespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	cmd := exec.CommandContext(ctx, y.pulumi, "stack", "export")
	cmd.Dir, cmd.Env = y.project, y.env
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("pulumi stack export: %v", err)
	}
	var state struct {
		Deployment struct {
			Resources []struct{ URN, Type string }
		}
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatalf("pulumi stack export: %v", err)
	}
	var left []string
	for _, r := range state.Deployment.Resources {
		if !slices.Contains([]string{"pulumi:pulumi:Stack", "pulumi:providers:kubernetes", "pulumi:providers:warmpool"}, r.Type) {
			left = append(left, r.URN)
		}
	}
	if len(left) > 0 {
		t.Errorf("the stack's state still holds %v after destroy", left)
	}
	after := snapshotSharedInstalls(t, ctx, y.cluster)
	for k, v := range adopted {
		if after[k] != v {
			t.Errorf("shared install %s changed: %s -> %s", k, v, after[k])
		}
	}
}
