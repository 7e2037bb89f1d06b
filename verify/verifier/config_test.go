package verifier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kfake "k8s.io/client-go/kubernetes/fake"
)

const outputsJSON = `{
  "clusterName": "local", "kubeconfig": "[secret]", "namespace": "wp-ns", "stackLabel": "warm-pool-autoscaling-keda.dev",
  "poolName": "pool-a", "templateName": "warm-pool-agent", "scaledObjectName": "so-a",
  "exporterServiceAccount": "exp-sa", "exporterService": "exp-svc",
  "exporterUrl": "http://exp-svc.wp-ns.svc.cluster.local:8080/demand", "claimSelector": "",
  "minReplicas": 1, "maxReplicas": "3", "loadCap": 2
}`

func TestParseConfigFromOutputs(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "outputs.json")
	if err := os.WriteFile(f, []byte(outputsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	noPulumi := func(string) ([]byte, error) { t.Fatal("pulumi must not run with --outputs-file"); return nil, nil }
	var notes []string
	note := func(f string, a ...any) { notes = append(notes, f) }

	c, err := parseConfig([]string{"--outputs-file", f}, io.Discard, note, noPulumi)
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "wp-ns" || c.Pool != "pool-a" || c.ScaledObject != "so-a" || c.ExporterSA != "exp-sa" ||
		c.ExporterService != "exp-svc" || c.LoadCap != 2 || c.OutputsMax != 3 || c.StackLabel != "warm-pool-autoscaling-keda.dev" ||
		c.ExporterPath != "demand" || c.kubeconfigOutput != "" || c.ExporterURL != "" {
		t.Fatalf("outputs not applied as expected: %+v", c)
	}
	// Flags win over outputs.
	c, err = parseConfig([]string{"--outputs-file", f, "--namespace", "mine", "--load-cap", "1", "--pool", "p2"}, io.Discard, note, noPulumi)
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "mine" || c.LoadCap != 1 || c.Pool != "p2" || c.ScaledObject != "so-a" {
		t.Fatalf("flags did not override: %+v", c)
	}
	if c.Isolation != isolationVM {
		t.Fatalf("isolation defaults to vm, got %q", c.Isolation)
	}
	withIso := filepath.Join(dir, "gvisor.json")
	if err := os.WriteFile(withIso, []byte(`{"isolation": "gvisor", "stackLabel": "p.s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{"--outputs-file", withIso}, io.Discard, note, noPulumi)
	if err != nil || c.Isolation != isolationGVisor {
		t.Fatalf("isolation output not applied: %v %q", err, c.Isolation)
	}
	c, err = parseConfig([]string{"--outputs-file", withIso, "--isolation", "vm"}, io.Discard, note, noPulumi)
	if err != nil || c.Isolation != isolationVM {
		t.Fatalf("--isolation did not override the output: %v %q", err, c.Isolation)
	}
	c, err = parseConfig([]string{"--outputs-file", "none", "--without-stack-label", "--probe-url", "http://1.1.1.1/"}, io.Discard, note, noPulumi)
	if err != nil || !c.WithoutStackLabel || c.StackLabel != "" {
		t.Fatalf("--without-stack-label with no stack label: %v %+v", err, c)
	}
	// Without a file, pulumi is asked; when it fails the run goes on with
	// flags and defaults, and says so.
	notes = nil
	c, err = parseConfig(nil, io.Discard, note, func(string) ([]byte, error) { return nil, errors.New("no Pulumi.yaml") })
	if err != nil || c.Namespace != projectName || !strings.Contains(strings.Join(notes, "\n"), "flags and defaults only") {
		t.Fatalf("fallback: %v %+v %v", err, c, notes)
	}
}

func TestParseConfigRejects(t *testing.T) {
	noPulumi := func(string) ([]byte, error) { return nil, errors.New("none") }
	note := func(string, ...any) {}
	for _, args := range [][]string{
		{"--phase", "everything"},
		{"--load-cap", "0"},
		{"--control-k", "0"},
		{"--outputs-file", "/does/not/exist.json"},
		{"stray"},
		{"--isolation", "kvm"},
		{"--isolation", ""},
		{"--stack-label", "x", "--without-stack-label"},
		{"--probe-url", "aws.amazon.com"},
		{"--probe-url", "ftp://example.com/"},
		{"--probe-url", "http://127.0.0.1:8080/"},
		{"--probe-url", "http://[::1]/"},
		{"--probe-url", "http://localhost/"},
		{"--probe-url", "http://0.0.0.0/"},
	} {
		if _, err := parseConfig(args, io.Discard, note, noPulumi); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	// An isolation output that is not one verify knows is refused too.
	f := filepath.Join(t.TempDir(), "outputs.json")
	if err := os.WriteFile(f, []byte(`{"isolation": "firecracker"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseConfig([]string{"--outputs-file", f}, io.Discard, note, noPulumi); err == nil || !strings.Contains(err.Error(), "firecracker") {
		t.Errorf("isolation output firecracker: %v", err)
	}
	if _, err := parseOutputs([]byte(`{"loadCap": "three"}`)); err == nil {
		t.Error("a non-numeric loadCap was accepted")
	}
	if _, err := parseOutputs([]byte(`[1,2]`)); err == nil {
		t.Error("a non-object was accepted")
	}
}

func TestGuardNamespace(t *testing.T) {
	good := map[string]string{labelManagedBy: projectName, labelStack: "warm-pool-autoscaling-keda.dev"}
	managedOnly := map[string]string{labelManagedBy: projectName}
	cases := []struct {
		name    string
		labels  map[string]string
		stack   string
		without bool
		absent  bool
		ok      bool
	}{
		{"labelled, stack matches", good, "warm-pool-autoscaling-keda.dev", false, false, true},
		{"stack unknown, no opt-in", managedOnly, "", false, false, false},
		{"stack unknown, opted in, namespace has no stack label", managedOnly, "", true, false, true},
		{"stack unknown, opted in, namespace labelled for a stack", good, "", true, false, false},
		{"stack unknown, namespace labelled for a stack", good, "", false, false, false},
		{"stack unknown, an empty stack label is still a label", map[string]string{labelManagedBy: projectName, labelStack: ""}, "", true, false, false},
		{"no managed-by label", map[string]string{"team": "a"}, "", true, false, false},
		{"managed by something else", map[string]string{labelManagedBy: "helm"}, "", true, false, false},
		{"another stack's namespace", good, "warm-pool-autoscaling-keda.prod", false, false, false},
		{"stack known, label missing", managedOnly, "warm-pool-autoscaling-keda.dev", false, false, false},
		{"namespace absent", nil, "", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kube := kfake.NewClientset()
			if !tc.absent {
				_, _ = kube.CoreV1().Namespaces().Create(context.Background(), nsObj(tc.labels), metav1.CreateOptions{})
			}
			ev, err := guardNamespace(context.Background(), kube, testNS, tc.stack, tc.without)
			if (err == nil) != tc.ok {
				t.Fatalf("ok=%t want %t (%v / %s)", err == nil, tc.ok, err, ev)
			}
			var ue usageError
			if err != nil && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "refusing to run")) {
				t.Fatalf("refusal must be a clear usage error: %v", err)
			}
		})
	}
}

// With no stack label known, a run that would touch another stack's
// namespace is refused before anything is read or changed, and the refusal
// names the flag that fixes it.
func TestExecuteRefusesUnknownStackLabel(t *testing.T) {
	c := newCluster(t)
	c.start()
	cfg := testConfig()
	cfg.StackLabel = ""
	ex := blueprintExec()
	code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
	if code != 2 || !strings.Contains(out, "--stack-label warm-pool-autoscaling-keda.dev") {
		t.Fatalf("exit %d, want 2 naming --stack-label\n%s", code, out)
	}
	if len(rep.Checks) != 0 || len(c.claimNames(testNS)) != 0 || ex.calls.Load() != 0 {
		t.Fatal("a refused run did something")
	}
	so, ok := c.soExists(context.Background())
	if !ok || so.GetUID() != "so-uid-0" {
		t.Fatal("a refused run touched the ScaledObject")
	}
}

// A refused namespace exits 2 and touches nothing.
func TestExecuteRefusesForeignNamespace(t *testing.T) {
	c := newCluster(t)
	c.start()
	ns, _ := c.kube.CoreV1().Namespaces().Get(context.Background(), testNS, metav1.GetOptions{})
	ns.Labels = map[string]string{"team": "a"}
	_, _ = c.kube.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{})
	cfg := testConfig()
	ex := blueprintExec()
	code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
	if code != 2 || !strings.Contains(out, "refusing to run") {
		t.Fatalf("exit %d, want 2\n%s", code, out)
	}
	if len(rep.Checks) != 0 || len(c.claimNames(testNS)) != 0 || ex.calls.Load() != 0 {
		t.Fatal("a refused run did something")
	}
	if _, ok := c.soExists(context.Background()); !ok {
		t.Fatal("a refused run touched the ScaledObject")
	}
}

func TestHelpDocumentsFlags(t *testing.T) {
	var out, errb strings.Builder
	code := Main([]string{"--help"}, &out, &errb)
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	help := out.String() + errb.String()
	for _, f := range []string{"-kubeconfig", "-context", "-namespace", "-phase", "-json", "-exporter-url", "-outputs-file",
		"-step-timeout", "-adoption-bound", "-control-floor", "-control-k", "-restore-timeout",
		"-isolation", "-stack-label", "-without-stack-label", "-probe-url", "-pool", "-stack-namespace", "-hpa-sync-period"} {
		if !strings.Contains(help, f) {
			t.Errorf("--help does not document %s", f)
		}
	}
}

// A refusal (exit 2) with --json writes the refusal as the report: for bad
// flags (wherever --json sits among them) and for a refused namespace.
func TestRefusalWritesJSON(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--phase", "everything"},
		{"--nonsense"},
		{"--isolation", "kvm"},
		{"--outputs-file", "none", "--kubeconfig", filepath.Join(dir, "absent")},
	} {
		path := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		full := append([]string{"--json", path, "--outputs-file", "none", "--without-stack-label"}, args...)
		if i == 1 {
			full = append(append([]string{"--outputs-file=none"}, args...), "--json="+path)
		}
		code := Main(full, io.Discard, io.Discard)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", full, code)
			continue
		}
		checkRefusalJSON(t, path, "")
	}

	c := newCluster(t)
	c.start()
	cfg := testConfig()
	cfg.StackLabel = "someone-else.prod"
	cfg.JSONPath = filepath.Join(dir, "guard.json")
	if code, _, _ := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c}); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	checkRefusalJSON(t, cfg.JSONPath, "refusing to run: namespace")
}

// With --json - the report goes to the stdout Run is given (a caller's buffer, not the
// process's), and the text to stderr.
func TestRunWritesTheJSONReportToItsStdout(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--json", "-", "--outputs-file", "none", "--phase", "everything"}, &out, &errb)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr: %s", code, errb.String())
	}
	var j struct {
		Refused  string `json:"refused"`
		ExitCode int    `json:"exitCode"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil || j.ExitCode != 2 || !strings.Contains(j.Refused, "everything") {
		t.Fatalf("stdout is not the refusal's report: %v %+v\n%s", err, j, out.String())
	}
	if !strings.Contains(errb.String(), "verify: ") {
		t.Errorf("the refusal's text is not on stderr: %q", errb.String())
	}
}

func checkRefusalJSON(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no report written: %v", err)
		return
	}
	var j struct {
		Refused  string `json:"refused"`
		ExitCode int    `json:"exitCode"`
		Checks   []any  `json:"checks"`
	}
	if err := json.Unmarshal(b, &j); err != nil || j.Refused == "" || j.ExitCode != 2 || len(j.Checks) != 0 || !strings.Contains(j.Refused, want) {
		t.Errorf("%s: %v %+v", path, err, j)
	}
}

func TestJSONPathFromArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", "a.json"}, "a.json"},
		{[]string{"-json=b.json", "--phase", "demand"}, "b.json"},
		{[]string{"--namespace", "json", "--require-exec", "--json", "c.json"}, "c.json"},
		{[]string{"--nonsense", "--json", "e.json"}, "e.json"},
		{[]string{"stray", "--json", "d.json"}, ""},
		{[]string{"--json", "-"}, "-"},
	} {
		if got := jsonPathFromArgs(c.args); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}
