package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/pulumirun"
	"warmpool.local/warm-pool-autoscaling-keda/program"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// The warmpool package from a team's own YAML stack (examples/yaml/Pulumi.yaml), run with the
// real Pulumi CLI and the YAML language host, the package's plugin built from provider/.

// yamlConsumerNamespace is the namespace examples/yaml gives its pool.
const yamlConsumerNamespace = "team-sandboxes"

// yamlSecondNamespace is the namespace of the second component the YAML stack gets.
const yamlSecondNamespace = "team-sandboxes-b"

// secondConfigEnv is the second component's env value from a resource of the same update.
const secondConfigEnv = "CONFIG_MAP_ID"

// yamlPackagesEntry is examples/yaml's packages entry, which its copy here leaves out.
const yamlPackagesEntry = "packages:\n  warmpool: ../../provider\n"

// yamlConsumer is examples/yaml as a project of its own, run by the CLI in a pulumirun.Home.
type yamlConsumer struct {
	cluster *localcluster.Cluster
	work    string
	project string // the project's directory
	home    *pulumirun.Home
	pool    string // the poolName output, once up has run
	// second: the stack holds a second component (secondComponent), whose namespace destroy removes.
	second bool
	// agentAPIKey is the secret the stack's config gives the agent's environment.
	agentAPIKey string
}

// newYAMLConsumer installs the package's plugin and the Kubernetes provider in a home of its own,
// with the YAML language host in reach, and makes stack dev of examples/yaml on the control
// plane c, its installs adopted and its exporter on the prebuilt image.
func newYAMLConsumer(ctx context.Context, t *testing.T, c *localcluster.Cluster, work string, plugin pulumirun.Plugin) *yamlConsumer {
	bins, err := toolcache.Ensure(ctx, framework.NewLogWriter(t), toolcache.PulumiYAML...)
	if err != nil {
		t.Fatal(err)
	}
	// What `pulumi package add` arranges from the repository; here the plugin just built,
	// installed as a released plugin binary is.
	home, err := pulumirun.NewHome(ctx, work, framework.NewLogWriter(t), plugin)
	if err != nil {
		t.Fatal(err)
	}
	// The CLI finds a bundled language host beside itself or on PATH ("plugin install" refuses it).
	home.Env["PATH"] = filepath.Dir(bins.Path("pulumi-language-yaml")) + string(os.PathListSeparator) + os.Getenv("PATH")
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(root, "examples", "yaml", "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The packages entry names provider/ relative to the checkout, which the copy is not in, and
	// asks the CLI to build the plugin from source (no Go language host here): the plugin is
	// installed above instead, so the entry goes.
	before, after, ok := bytes.Cut(example, []byte(yamlPackagesEntry))
	if !ok {
		t.Fatalf("examples/yaml/Pulumi.yaml has no %q to leave out of the copy", yamlPackagesEntry)
	}
	example = append(before, after...)
	y := &yamlConsumer{cluster: c, work: work, project: filepath.Join(work, "project"), home: home,
		agentAPIKey: "sk-" + rand.Text()}
	if err := os.MkdirAll(y.project, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, filepath.Join(y.project, "Pulumi.yaml"), string(example))
	y.must(ctx, t, "stack", "init", "dev")
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	y.must(ctx, t, "config", "set", "--secret", "kubeconfig", string(kubeconfig))
	y.must(ctx, t, "config", "set", "--secret", "agentApiKey", y.agentAPIKey)
	for k, v := range map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt", "isolation": "gvisor", "exporterImage": exporterImageRef} {
		y.must(ctx, t, "config", "set", k, v)
	}
	return y
}

// run runs the CLI in the project and returns its combined output; the output is logged.
func (y *yamlConsumer) run(ctx context.Context, t *testing.T, args ...string) (string, error) {
	start := time.Now()
	out, err := y.home.Command(ctx, y.project, append(args, "--non-interactive")...).CombinedOutput()
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
		{"the secret input reaches the sandboxes' template and the state holds it only encrypted", y.secretKept},
		{"verify passes on what the package deployed", func(ctx context.Context, t *testing.T) {
			r := &stackRun{cluster: y.cluster, work: y.work, ns: yamlConsumerNamespace, pool: y.pool}
			r.warmBeforeVerify(ctx, t)
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
		{"a second component in the stack: refused on the first's namespace, naming both; up in its own (an env value from a resource of the same update, unknown to its preview) leaves the first as it was; verify passes on each", func(ctx context.Context, t *testing.T) {
			y.secondComponent(ctx, t, verifyBin)
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
	y.upOutputs(ctx, t)
}

// unknownInputChecked holds the second component's up to an input its preview could not know:
// the preview said so on the component, and the update gave the SandboxTemplate the value, the
// ConfigMap's ID (namespace/name) as the cluster holds it.
func (y *yamlConsumer) unknownInputChecked(ctx context.Context, t *testing.T, upOut string) {
	want := "the preview could not check template.env." + secondConfigEnv
	if !strings.Contains(upOut, want) {
		t.Errorf("pulumi up's preview does not say %q", want)
	}
	cms, err := y.cluster.Client.CoreV1().ConfigMaps(yamlConsumerNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("config maps in %s: %v", yamlConsumerNamespace, err)
	}
	var id string
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "more-config") {
			id = cm.Namespace + "/" + cm.Name
		}
	}
	if id == "" {
		t.Fatalf("no more-config ConfigMap in %s", yamlConsumerNamespace)
	}
	got, _ := y.templateEnv(ctx, t, yamlSecondNamespace, secondConfigEnv)
	if len(got) != 1 || got[0] != id {
		t.Fatalf("the second component's templates give %s %v, want the ConfigMap's ID %s once", secondConfigEnv, got, id)
	}
	t.Logf("the preview named the input it could not check; the update gave the template %s=%s, the ConfigMap's ID", secondConfigEnv, id)
}

// secretKept reads the secret where the agent gets it, the SandboxTemplate in the cluster, and
// then the state: no file of the backend holds it in clear, and the template's resource in the
// stack's checkpoint holds it as a secret.
func (y *yamlConsumer) secretKept(ctx context.Context, t *testing.T) {
	values, templates := y.templateEnv(ctx, t, yamlConsumerNamespace, "AGENT_API_KEY")
	if reached := slices.Index(values, y.agentAPIKey); len(values) != 1 || reached != 0 {
		t.Fatalf("the %d sandbox templates in %s give the agent AGENT_API_KEY %d times, with the secret's value at %d; want once, with it", templates, yamlConsumerNamespace, len(values), reached)
	}
	b, err := os.ReadFile(filepath.Join(y.project, "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var project struct{ Name string }
	if err := yaml.Unmarshal(b, &project); err != nil || project.Name == "" {
		t.Fatalf("the project's name in its Pulumi.yaml: %q, %v", project.Name, err)
	}
	held, err := framework.SecretKeptInState(y.home.Backend, project.Name, "dev", y.agentAPIKey, "kubernetes:"+contract.AgentSandboxExtensionsAPIVersion+":"+contract.SandboxTemplateKind)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the secret reached the agent's template; the backend holds it nowhere in clear, and %d SandboxTemplate in the checkpoint holds it encrypted", held)
}

// templateEnv reads the SandboxTemplates in ns as the cluster holds them: the values their agents'
// env gives name, one per occurrence, and how many templates there are.
func (y *yamlConsumer) templateEnv(ctx context.Context, t *testing.T, ns, name string) ([]string, int) {
	gvr := schema.GroupVersionResource{Group: contract.AgentSandboxExtensionsGroup, Version: contract.AgentSandboxVersion, Resource: contract.SandboxTemplatesResource}
	list, err := y.cluster.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("sandbox templates in %s: %v", ns, err)
	}
	var values []string
	for _, tmpl := range list.Items {
		containers, _, _ := unstructured.NestedSlice(tmpl.Object, "spec", "podTemplate", "spec", "containers")
		for _, c := range containers {
			env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
			for _, e := range env {
				if e, _ := e.(map[string]any); e["name"] == name {
					values = append(values, fmt.Sprint(e["value"]))
				}
			}
		}
	}
	return values, len(list.Items)
}

// upOutputs runs pulumi up, checks the first component's outputs and writes them where verify
// reads them (outputs.json), and returns the stack's outputs and what up printed.
func (y *yamlConsumer) upOutputs(ctx context.Context, t *testing.T) (map[string]any, string) {
	upOut := y.must(ctx, t, "up", "--yes")
	b, err := y.home.Command(ctx, y.project, "stack", "output", "--json", "--show-secrets").Output()
	if err != nil {
		t.Fatalf("pulumi stack output: %v", err)
	}
	var outputs map[string]any
	if err := json.Unmarshal(b, &outputs); err != nil {
		t.Fatalf("pulumi stack output: %v", err)
	}
	first := maps.Clone(outputs)
	delete(first, "more")
	if b, err = json.Marshal(first); err != nil {
		t.Fatal(err)
	}
	for _, k := range framework.OutputKeys {
		if _, ok := outputs[k]; !ok {
			t.Errorf("stack output %q is missing (verify reads it)", k)
		}
	}
	y.pool, _ = outputs["poolName"].(string)
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
	return outputs, upOut
}

// withSecondComponent is the project with a second AutoscaledWarmPool, "more-sandboxes", in
// namespace ns, adopting the cluster's installs as the first does; its outputs are the stack's
// output "more". Its agent's env takes a value from a ConfigMap the same update creates (its ID,
// unknown until it exists; its UID would read as null in pulumi-yaml's preview, which marks
// unknown only the outputs its schema declares): the input a preview cannot know.
func withSecondComponent(t *testing.T, project, ns string) string {
	resource := `  more-config:
    type: kubernetes:core/v1:ConfigMap
    properties:
      metadata:
        namespace: ${sandboxes.namespace}
      data:
        team: b
    options:
      provider: ${cluster}
  more-sandboxes:
    type: warmpool:AutoscaledWarmPool
    properties:
      namespace: ` + ns + `
      minReplicas: 1
      maxReplicas: 3
      kedaMode: ${kedaMode}
      agentSandboxMode: ${agentSandboxMode}
      isolation: ${isolation}
      exporterImage: ${exporterImage}
      template:
        env:
          ` + secondConfigEnv + `: ${more-config.id}
    options:
      providers:
        - ${cluster}
`
	before, after, ok := strings.Cut(project, "\noutputs:\n")
	if !ok {
		t.Fatal("examples/yaml has no outputs section to put a second component before")
	}
	outputs := "  more:\n"
	for _, k := range append(slices.Clone(framework.OutputKeys), "isolation") {
		if k != "kubeconfig" && k != "clusterName" {
			outputs += "    " + k + ": ${more-sandboxes." + k + "}\n"
		}
	}
	return before + "\n" + resource + "outputs:\n" + strings.TrimSuffix(after, "\n") + "\n" + outputs
}

// secondComponent adds a second component to the stack: on the first's namespace the preview is
// refused naming both, and creates nothing; in a namespace of its own, up creates it beside
// the first, whose objects stay as they were, and verify passes on the second (every phase) and
// again on the first (its demand phase) with both deployed.
func (y *yamlConsumer) secondComponent(ctx context.Context, t *testing.T, verifyBin string) {
	path := filepath.Join(y.project, "Pulumi.yaml")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, path, withSecondComponent(t, string(good), yamlConsumerNamespace))
	out, err := y.run(ctx, t, "preview")
	if err == nil {
		t.Fatal("pulumi preview passed with two components in one namespace")
	}
	// Either may be constructed second, and is the one refused.
	for _, want := range []string{"cannot join the stack's other AutoscaledWarmPools", `namespace "` + yamlConsumerNamespace + `" is "`,
		`"sandboxes"`, `"more-sandboxes"`, "needs namespaces of its own"} {
		if !strings.Contains(out, want) {
			t.Errorf("pulumi preview's output does not say %q", want)
		}
	}

	uids := func() string {
		ns, err := y.cluster.Client.CoreV1().Namespaces().Get(ctx, yamlConsumerNamespace, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace %s: %v", yamlConsumerNamespace, err)
		}
		d, err := y.cluster.Client.AppsV1().Deployments(yamlConsumerNamespace).Get(ctx, contract.ExporterName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("deployment %s/%s: %v", yamlConsumerNamespace, contract.ExporterName, err)
		}
		return string(ns.UID) + " " + string(d.UID)
	}
	before := uids()
	writeFileAtomic(t, path, withSecondComponent(t, string(good), yamlSecondNamespace))
	y.second = true
	outputs, upOut := y.upOutputs(ctx, t)
	y.unknownInputChecked(ctx, t, upOut)
	if after := uids(); after != before {
		t.Errorf("the first component's namespace or exporter was replaced when the second came (UIDs %s -> %s)", before, after)
	}
	more, ok := outputs["more"].(map[string]any)
	if !ok {
		t.Fatalf("stack output more is %v, want the second component's outputs", outputs["more"])
	}
	if more["namespace"] != yamlSecondNamespace {
		t.Errorf("the second component's namespace output is %v, want %s", more["namespace"], yamlSecondNamespace)
	}
	second := maps.Clone(outputs)
	delete(second, "more")
	maps.Copy(second, more)
	dir := filepath.Join(y.work, "more")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outputs.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	pool, _ := more["poolName"].(string)
	r := &stackRun{cluster: y.cluster, work: dir, ns: yamlSecondNamespace, pool: pool}
	r.warmBeforeVerify(ctx, t)
	rep, code := r.runVerify(ctx, t, verifyBin, "verify-yaml-second")
	if code != 0 {
		t.Fatalf("verify exited %d on the YAML stack's second component", code)
	}
	checkScaleSteps(t, rep)
	first := &stackRun{cluster: y.cluster, work: y.work, ns: yamlConsumerNamespace, pool: y.pool}
	rep, code = first.runVerify(ctx, t, verifyBin, "verify-yaml-first-beside", "--phase", "demand")
	if code != 0 {
		t.Fatalf("verify exited %d on the YAML stack's first component beside the second", code)
	}
	checkDemandSteps(t, rep)
}

func (y *yamlConsumer) destroy(ctx context.Context, t *testing.T, adopted sharedInstall) {
	y.must(ctx, t, "destroy", "--yes")
	namespaceGone(ctx, t, y.cluster, yamlConsumerNamespace)
	if y.second {
		namespaceGone(ctx, t, y.cluster, yamlSecondNamespace)
	}
	b, err := y.home.Command(ctx, y.project, "stack", "export").Output()
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
	sharedInstallsAlone(ctx, t, y.cluster, adopted)
}
