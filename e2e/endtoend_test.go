package e2e

// The end-to-end test: the product run exactly as a user runs it, against a
// local control plane (real kube-apiserver, controller-manager with the HPA,
// KEDA, agent-sandbox; KWOK nodes instead of kubelets), with the real Pulumi
// CLI and Kubernetes provider running this package's `program` inline.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/pulumirun"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/tcpproxy"
	"github.com/warmpool/warm-pool-autoscaling-keda/program"
)

// e2eEnv is the shared state of one end-to-end run.
type e2eEnv struct {
	t        testing.TB
	cluster  *localcluster.Cluster
	work     string
	stack    *pulumirun.Stack
	config   map[string]string
	outputs  map[string]any
	ns, pool string

	apiProxy     *tcpproxy.Proxy
	exporterBin  string
	exporterAddr string
	exporter     *exec.Cmd
	tokenFile    string
	firstToken   string // revoked by the rotation fault
}

// hpaSyncPeriod is the HPA controller's sync period for the run: EKS's 15s
// unless E2E_HPA_SYNC_PERIOD says otherwise.
func hpaSyncPeriod(t testing.TB) time.Duration {
	if v := os.Getenv("E2E_HPA_SYNC_PERIOD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("E2E_HPA_SYNC_PERIOD=%q: %v", v, err)
		}
		return d
	}
	return 15 * time.Second
}

// newE2EEnv starts a local control plane and prepares everything the product
// needs beside it (the exporter binary, the cuttable path to the API server,
// the Pulumi stack in existing/require/adopt/adopt modes); the caller runs up.
func newE2EEnv(tb testing.TB, ctx context.Context, hpaSync time.Duration) *e2eEnv {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		tb.Skipf("%s=1: the local control plane was not started; this proves nothing", localcluster.SkipEnv)
	}
	e := &e2eEnv{t: tb, work: tb.TempDir()}
	c, err := localcluster.Start(ctx, localcluster.Options{StateDir: filepath.Join(e.work, "cluster"), HPASyncPeriod: hpaSync, Progress: newLogWriter(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	e.cluster = c
	tb.Cleanup(func() {
		e.stopExporter()
		if tb.Failed() {
			if b, err := os.ReadFile(filepath.Join(e.work, "exporter.log")); err == nil {
				tb.Logf("exporter log (last 3000 bytes):\n%s", lastBytes(string(b), 3000))
			}
			tb.Logf("control plane logs: %s", filepath.Join(c.StateDir, "logs"))
		}
		if err := c.Stop(); err != nil {
			tb.Errorf("stopping the control plane: %v", err)
		}
	})
	e.exporterBin = goBuild(tb, e.work, "github.com/warmpool/warm-pool-autoscaling-keda/exporter/cmd/claim-exporter")
	apiURL, _ := url.Parse(c.APIServerURL)
	if e.apiProxy, err = tcpproxy.Start(apiURL.Host); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.apiProxy.Close() })
	e.exporterAddr = freeAddr(tb)
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	e.config = map[string]string{
		"clusterMode":      "existing",
		"kubeconfig":       string(kubeconfig),
		"runtimeClassMode": "require",
		"agentSandboxMode": "adopt",
		"kedaMode":         "adopt",
		// KEDA runs as a local process here, so it reads the exporter where the
		// test runs it, not through the Service (no kube-proxy).
		"exporterUrl":     "http://" + e.exporterAddr + "/demand",
		"pollingInterval": "5",
	}
	e.stack, err = pulumirun.New(ctx, pulumirun.Options{
		Output: newLogWriter(tb), WorkDir: filepath.Join(e.work, "pulumi"), ProjectFile: "../Pulumi.yaml",
		StackName: "e2e", Program: program.Run, Config: e.config,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Minute)
	defer cancel()
	e := newE2EEnv(t, ctx, hpaSyncPeriod(t))
	verifyBin := goBuild(t, e.work, "github.com/warmpool/warm-pool-autoscaling-keda/verify")
	adopted := snapshotSharedInstalls(t, ctx, e.cluster)

	steps := []struct {
		name string
		run  func(context.Context, *testing.T)
	}{
		{"pulumi up creates the stack and its outputs are what verify reads", func(ctx context.Context, _ *testing.T) { e.up(ctx) }},
		{"the exporter runs with a TokenRequest token of its ServiceAccount", func(ctx context.Context, _ *testing.T) { e.startExporterWithToken(ctx) }},
		{"verify passes every check that needs no kubelet and skips the exec ones", func(ctx context.Context, _ *testing.T) { e.verify(ctx, verifyBin) }},
		{"pulumi up under load leaves spec.replicas to the HPA", func(ctx context.Context, _ *testing.T) { e.upUnderLoad(ctx) }},
		{"faults: exporter stopped, API unreachable at restart, token rotated", e.faults},
		{"bad input fails preview and up with its message and creates nothing", e.badInput},
		{"pulumi destroy removes everything in order and leaves shared installs alone", func(ctx context.Context, _ *testing.T) { e.destroy(ctx, adopted) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { e.t = t; s.run(ctx, t) }) {
			e.t = t
			if t.Failed() {
				t.Logf("control plane logs: %s", filepath.Join(e.cluster.StateDir, "logs"))
			}
			t.Fatalf("stopping after %q failed", s.name)
		}
	}
}

func (e *e2eEnv) up(ctx context.Context) {
	t := e.t
	res, err := e.stack.Up(ctx, optup.ProgressStreams(newLogWriter(t)))
	if err != nil {
		t.Fatalf("pulumi up: %v", err)
	}
	e.outputs = map[string]any{}
	for k, v := range res.Outputs {
		e.outputs[k] = v.Value
	}
	for _, k := range []string{"namespace", "stackLabel", "poolName", "templateName", "scaledObjectName", "exporterServiceAccount",
		"exporterService", "exporterUrl", "claimSelector", "minReplicas", "maxReplicas", "loadCap", "kubeconfig", "clusterName"} {
		if _, ok := e.outputs[k]; !ok {
			t.Errorf("stack output %q is missing (verify reads it)", k)
		}
	}
	if !res.Outputs["kubeconfig"].Secret {
		t.Errorf("the kubeconfig output is not a secret")
	}
	e.ns, e.pool = str(e.outputs["namespace"]), str(e.outputs["poolName"])
	if got := str(e.outputs["exporterUrl"]); got != e.config["exporterUrl"] {
		t.Errorf("exporterUrl output %q, want the configured %q", got, e.config["exporterUrl"])
	}
	b, _ := json.MarshalIndent(e.outputs, "", "  ")
	if err := os.WriteFile(filepath.Join(e.work, "outputs.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ns, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s after up: %v", e.ns, err)
	}
	t.Logf("namespace %s labels %v", e.ns, ns.Labels)
	e.waitSpecReplicas(ctx, 1, 2*time.Minute)
}

// startExporterWithToken runs the exporter as a local process with a real
// token of its ServiceAccount, through the cuttable proxy to the API server.
func (e *e2eEnv) startExporterWithToken(ctx context.Context) {
	t := e.t
	e.tokenFile = filepath.Join(e.work, "exporter-token")
	e.firstToken = e.boundToken(ctx, "exporter-token-1")
	writeFileAtomic(t, e.tokenFile, e.firstToken)
	e.startExporter()
	e.waitDemand(ctx, 0, true, time.Minute)
}

func (e *e2eEnv) verify(ctx context.Context, verifyBin string) {
	t := e.t
	reportPath := filepath.Join(e.work, "verify-report.json")
	cmd := exec.CommandContext(ctx, verifyBin, "--outputs-file", filepath.Join(e.work, "outputs.json"),
		"--kubeconfig", e.cluster.Kubeconfig, "--exporter-url", "http://"+e.exporterAddr+"/demand",
		"--phase", "all", "--json", reportPath)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("verify (%s):\n%s", time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("verify exited with %v", err)
	}
	var rep struct {
		Checks             []struct{ Phase, Name, Status, Evidence string }
		ScaleUp, ScaleDown []struct {
			Claims         int      `json:"claims"`
			Expected       int64    `json:"expected"`
			SpecReplicas   *int64   `json:"specReplicas"`
			LatencySeconds *float64 `json:"latencySeconds"`
		}
		Control *struct {
			WindowSeconds float64 `json:"windowSeconds"`
			Readings      int     `json:"readings"`
		}
		Passed, Failed, Skipped int
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("verify's JSON report: %v", err)
	}
	if rep.Failed != 0 || rep.Passed == 0 {
		t.Errorf("verify report: %d passed, %d failed", rep.Passed, rep.Failed)
	}
	for _, c := range rep.Checks {
		if c.Status == "SKIP" && !strings.Contains(strings.ToLower(c.Evidence+c.Name), "exec") && !strings.Contains(strings.ToLower(c.Evidence), "kubelet") {
			t.Errorf("check %q was skipped for a reason other than exec/kubelet: %s", c.Name, c.Evidence)
		}
	}
	wantUp := []int{0, 1, 2, 3}
	var gotUp []int
	for _, s := range rep.ScaleUp {
		gotUp = append(gotUp, s.Claims)
		if s.SpecReplicas == nil || *s.SpecReplicas != s.Expected || s.LatencySeconds == nil {
			t.Errorf("scale-up step at %d claims: spec.replicas %v, expected %d, latency %v", s.Claims, s.SpecReplicas, s.Expected, s.LatencySeconds)
		}
	}
	if fmt.Sprint(gotUp) != fmt.Sprint(wantUp) {
		t.Errorf("scale-up steps drove claims %v, want %v", gotUp, wantUp)
	}
	if len(rep.ScaleDown) == 0 || rep.ScaleDown[len(rep.ScaleDown)-1].Claims != 0 {
		t.Errorf("scale-down did not end at 0 claims: %+v", rep.ScaleDown)
	}
	if rep.Control == nil || rep.Control.Readings == 0 || rep.Control.WindowSeconds <= 0 {
		t.Errorf("no control window in the report: %+v", rep.Control)
	}
}

// upUnderLoad re-runs up (without and with --refresh) while the HPA holds
// the pool above its floor: the pool must stay there.
func (e *e2eEnv) upUnderLoad(ctx context.Context) {
	t := e.t
	claims := []string{"load-1", "load-2", "load-3"}
	for _, n := range claims {
		e.createClaim(ctx, n)
	}
	defer e.deleteClaims(ctx, claims)
	e.waitSpecReplicas(ctx, 3, 2*time.Minute)
	prev, err := e.stack.Preview(ctx)
	if err != nil {
		t.Fatalf("preview under load: %v", err)
	}
	for op, n := range prev.ChangeSummary {
		if op != "same" && op != "read" && n > 0 { // reads are the adopt-mode checks of shared installs
			t.Errorf("preview under load plans %d %q: want no change (%v)", n, op, prev.ChangeSummary)
		}
	}
	for _, refresh := range []bool{false, true} {
		opts := []optup.Option{optup.ProgressStreams(newLogWriter(t))}
		if refresh {
			opts = append(opts, optup.Refresh())
		}
		res, err := e.stack.Up(ctx, opts...)
		if err != nil {
			t.Fatalf("pulumi up (refresh=%v) under load: %v", refresh, err)
		}
		t.Logf("up (refresh=%v) under load: %v", refresh, res.Summary.ResourceChanges)
		if n := e.specReplicas(ctx); n != 3 {
			t.Fatalf("after pulumi up (refresh=%v) under load spec.replicas=%d, want 3 (the HPA's)", refresh, n)
		}
	}
	e.consistently(ctx, "spec.replicas stays 3 after the re-runs", 2*e.cluster.HPASyncPeriod, func(n int64) bool { return n == 3 })
}

func (e *e2eEnv) faults(ctx context.Context, t *testing.T) {
	claims := []string{"fault-1", "fault-2", "fault-3"}
	for _, n := range claims {
		e.createClaim(ctx, n)
	}
	defer e.deleteClaims(ctx, claims)
	e.waitSpecReplicas(ctx, 3, 2*time.Minute)
	e.waitDemand(ctx, 3, true, time.Minute)

	// KEDA's fallback holds the pool after 3 failed reads (pollingInterval 5s);
	// watch well past that and past two HPA syncs.
	outage := 3*5*time.Second + 3*e.cluster.HPASyncPeriod
	t.Run("exporter stopped: the pool does not shrink", func(t *testing.T) {
		e.t = t
		e.stopExporter()
		e.consistently(ctx, "spec.replicas holds 3 with the exporter down", outage, func(n int64) bool { return n >= 3 })
		e.startExporter()
		e.waitDemand(ctx, 3, true, time.Minute)
	})
	t.Run("exporter restarted while the API is unreachable: no count, never 0", func(t *testing.T) {
		e.t = t
		e.apiProxy.Cut()
		e.stopExporter()
		e.startExporter()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			code, body := httpGet(t, "http://"+e.exporterAddr+"/demand")
			if code == http.StatusOK || strings.Contains(body, "active_claims") {
				t.Fatalf("with no successful read yet the exporter answered %d %s", code, body)
			}
			if code, _ := httpGet(t, "http://"+e.exporterAddr+"/healthz"); code != http.StatusOK {
				t.Fatalf("/healthz answered %d during the API outage (it must not depend on the API)", code)
			}
			time.Sleep(time.Second)
		}
		e.consistently(ctx, "spec.replicas holds 3 while the exporter has no count", outage, func(n int64) bool { return n >= 3 })
		e.apiProxy.Restore()
		e.waitDemand(ctx, 3, true, time.Minute)
	})
	t.Run("token file rotated: the new token is used, the old one is revoked", func(t *testing.T) {
		e.t = t
		writeFileAtomic(t, e.tokenFile, e.boundToken(ctx, "exporter-token-2"))
		// Revoke the first token by deleting the object it is bound to.
		if err := e.cluster.Client.CoreV1().Secrets(e.ns).Delete(ctx, "exporter-token-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the API server to reject the first token", 30*time.Second, func(ctx context.Context) (bool, error) {
			return e.tokenRejected(ctx, e.firstToken), nil
		})
		before := time.Now()
		waitFor(t, ctx, "a fresh read after the rotation", 30*time.Second, func(ctx context.Context) (bool, error) {
			d, ok := e.demand(t)
			if !ok || !d.Fresh {
				return false, nil
			}
			at, _ := time.Parse(time.RFC3339Nano, d.ReadAt)
			return at.After(before.Add(-time.Second)) && d.ActiveClaims == 3, nil
		})
	})
	e.t = t
}

func (e *e2eEnv) badInput(ctx context.Context, t *testing.T) {
	cases := []struct {
		name    string
		change  map[string]string
		message string
	}{
		{"min above max", map[string]string{"minReplicas": "4", "maxReplicas": "3"}, "minReplicas"},
		{"negative bound", map[string]string{"minReplicas": "-1"}, "minReplicas"},
		{"load cap above max", map[string]string{"loadCap": "5"}, "loadCap"},
		{"unknown cluster mode", map[string]string{"clusterMode": "borrow"}, "clusterMode"},
		{"unknown KEDA mode", map[string]string{"kedaMode": "upgrade"}, "kedaMode"},
		{"empty kubeconfig in existing mode", map[string]string{"kubeconfig": ""}, "kubeconfig"},
		{"invalid namespace name", map[string]string{"namespace": "Bad_Name"}, "namespace"},
		{"non-numeric target", map[string]string{"targetValue": "one"}, "targetValue"},
		{"old Kubernetes for a new cluster", map[string]string{"clusterMode": "create", "kubernetesVersion": "1.31"}, "kubernetesVersion"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]string{}
			for k, v := range e.config {
				cfg[k] = v
			}
			// A namespace of its own, so anything created would be found.
			cfg["namespace"] = fmt.Sprintf("bad-input-%d", i)
			for k, v := range tc.change {
				cfg[k] = v
			}
			st, err := pulumirun.New(ctx, pulumirun.Options{Output: newLogWriter(t), WorkDir: filepath.Join(e.work, "pulumi"),
				ProjectFile: "../Pulumi.yaml", StackName: fmt.Sprintf("bad-%d", i), Program: program.Run, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			_, perr := st.Preview(ctx, optpreview.ProgressStreams(newLogWriter(t)))
			_, uerr := st.Up(ctx)
			for what, err := range map[string]error{"preview": perr, "up": uerr} {
				if err == nil {
					t.Errorf("%s succeeded with %v", what, tc.change)
				} else if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("%s failed without naming %q: %v", what, tc.message, lastLines(err.Error(), 8))
				}
			}
			dep, err := st.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var state struct{ Resources []struct{ Type string } }
			_ = json.Unmarshal(dep.Deployment, &state)
			for _, r := range state.Resources {
				if r.Type != "pulumi:pulumi:Stack" && !strings.HasPrefix(r.Type, "pulumi:providers:") {
					t.Errorf("the failed up left resource %s in the stack", r.Type)
				}
			}
			if name := cfg["namespace"]; name != "Bad_Name" {
				if _, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("namespace %s exists after a failed up (err %v)", name, err)
				}
			}
			_ = st.Workspace().RemoveStack(ctx, st.Name())
		})
	}
	e.t = t
}

// sharedInstall is what must be identical before and after destroy.
type sharedInstall map[string]string

func snapshotSharedInstalls(t testing.TB, ctx context.Context, c *localcluster.Cluster) sharedInstall {
	s := sharedInstall{}
	crds, err := c.Dynamic.Resource(localcluster.CRDGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		g, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		if strings.HasSuffix(g, "agents.x-k8s.io") || strings.HasSuffix(g, "keda.sh") {
			s["crd/"+crd.GetName()] = string(crd.GetUID()) + "@" + crd.GetResourceVersion()
		}
	}
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, "keda", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s["namespace/keda"] = string(ns.UID)
	rc, err := c.Client.NodeV1().RuntimeClasses().Get(ctx, localcluster.RuntimeClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s["runtimeclass/"+rc.Name] = string(rc.UID) + "@" + rc.ResourceVersion
	return s
}

func (e *e2eEnv) destroy(ctx context.Context, before sharedInstall) {
	t := e.t
	evs := make(chan events.EngineEvent)
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range evs {
			if o := ev.ResOutputsEvent; o != nil && o.Metadata.Op == "delete" {
				order = append(order, o.Metadata.Type+"::"+urnName(o.Metadata.URN))
			}
		}
	}()
	if _, err := e.stack.Destroy(ctx, optdestroy.ProgressStreams(newLogWriter(t)), optdestroy.EventStreams(evs)); err != nil {
		t.Fatalf("pulumi destroy: %v", err)
	}
	<-done
	t.Logf("delete order: %v", order)
	pos := func(substr string) int {
		for i, o := range order {
			if strings.Contains(o, substr) {
				return i
			}
		}
		t.Errorf("nothing matching %q was deleted", substr)
		return -1
	}
	so, dep, pool, tmpl, ns := pos("ScaledObject"), pos("apps/v1:Deployment"), pos("SandboxWarmPool"), pos("SandboxTemplate"), pos("core/v1:Namespace")
	if !(so < dep && pool < tmpl && tmpl < ns && dep < ns) {
		t.Errorf("unsafe delete order: ScaledObject %d, exporter Deployment %d, pool %d, template %d, namespace %d", so, dep, pool, tmpl, ns)
	}
	waitFor(t, ctx, "namespace "+e.ns+" to be gone", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	after := snapshotSharedInstalls(t, ctx, e.cluster)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("shared install %s changed: %s -> %s", k, v, after[k])
		}
	}
	if ok, dead := e.cluster.Running(); !ok {
		t.Errorf("shared controllers stopped: %v", dead)
	}
	a, err := e.cluster.Dynamic.Resource(localcluster.APIServiceGVR).Get(ctx, "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
	if err != nil || !localcluster.ConditionTrue(a, "Available") {
		t.Errorf("KEDA's APIService is not Available after destroy (%v)", err)
	}
}

// --- helpers -------------------------------------------------------------

func (e *e2eEnv) startExporter() {
	t := e.t
	cmd := exec.Command(e.exporterBin,
		"--api-url", "https://"+e.apiProxy.Addr(), "--token-file", e.tokenFile, "--ca-file", e.cluster.CAFile,
		"--namespace", e.ns, "--listen", e.exporterAddr)
	logf, err := os.OpenFile(filepath.Join(e.work, "exporter.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.exporter = cmd
	waitFor(t, context.Background(), "the exporter's /healthz", 20*time.Second, func(context.Context) (bool, error) {
		code, _ := httpGet(t, "http://"+e.exporterAddr+"/healthz")
		return code == http.StatusOK, nil
	})
}

func (e *e2eEnv) stopExporter() {
	if e.exporter != nil && e.exporter.Process != nil {
		_ = e.exporter.Process.Kill()
		_ = e.exporter.Wait()
		e.exporter = nil
	}
}

// boundToken is a TokenRequest token of the exporter's ServiceAccount bound
// to a Secret of that name, so deleting the Secret revokes it.
func (e *e2eEnv) boundToken(ctx context.Context, secret string) string {
	t := e.t
	sa := str(e.outputs["exporterServiceAccount"])
	sec, err := e.cluster.Client.CoreV1().Secrets(e.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := e.cluster.Client.CoreV1().ServiceAccounts(e.ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: sec.Name, UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", e.ns, sa, err)
	}
	return tr.Status.Token
}

func (e *e2eEnv) tokenRejected(ctx context.Context, token string) bool {
	cfg := rest.AnonymousClientConfig(e.cluster.Config)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = cs.Discovery().ServerVersion()
	return apierrors.IsUnauthorized(err)
}

type demandDoc struct {
	ActiveClaims int64  `json:"active_claims"`
	Fresh        bool   `json:"fresh"`
	ReadAt       string `json:"read_at"`
}

func (e *e2eEnv) demand(t testing.TB) (demandDoc, bool) {
	code, body := httpGet(t, "http://"+e.exporterAddr+"/demand")
	var d demandDoc
	if code != http.StatusOK || json.Unmarshal([]byte(body), &d) != nil {
		return d, false
	}
	return d, true
}

func (e *e2eEnv) waitDemand(ctx context.Context, n int64, fresh bool, timeout time.Duration) {
	waitFor(e.t, ctx, fmt.Sprintf("the exporter to serve active_claims=%d fresh=%v", n, fresh), timeout, func(context.Context) (bool, error) {
		d, ok := e.demand(e.t)
		return ok && d.ActiveClaims == n && d.Fresh == fresh, nil
	})
}

func (e *e2eEnv) createClaim(ctx context.Context, name string) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"warmPoolRef": map[string]any{"name": e.pool}},
	}}
	if _, err := e.cluster.Dynamic.Resource(localcluster.SandboxClaimGVR).Namespace(e.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating claim %s: %v", name, err)
	}
}

// deleteClaims deletes claims by exact name and waits for the pool's floor.
func (e *e2eEnv) deleteClaims(ctx context.Context, names []string) {
	for _, n := range names {
		e.deleteClaim(ctx, n)
	}
	e.waitSpecReplicas(ctx, 1, 2*time.Minute)
}

func (e *e2eEnv) deleteClaim(ctx context.Context, name string) {
	err := e.cluster.Dynamic.Resource(localcluster.SandboxClaimGVR).Namespace(e.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("deleting claim %s: %v", name, err)
	}
}

// specReplicas reads the pool's spec.replicas; a failed read fails the test
// (it is never taken as a value).
func (e *e2eEnv) specReplicas(ctx context.Context) int64 {
	u, err := e.cluster.Dynamic.Resource(localcluster.SandboxWarmPoolGVR).Namespace(e.ns).Get(ctx, e.pool, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("reading pool %s/%s: %v", e.ns, e.pool, err)
	}
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found || err != nil {
		e.t.Fatalf("pool %s/%s has no spec.replicas (%v)", e.ns, e.pool, err)
	}
	return n
}

func (e *e2eEnv) waitSpecReplicas(ctx context.Context, want int64, timeout time.Duration) {
	waitFor(e.t, ctx, fmt.Sprintf("spec.replicas=%d", want), timeout, func(ctx context.Context) (bool, error) {
		return e.specReplicas(ctx) == want, nil
	})
}

// consistently reads spec.replicas every second for the whole window and
// fails at the first reading ok rejects.
func (e *e2eEnv) consistently(ctx context.Context, what string, window time.Duration, ok func(int64) bool) {
	e.t.Logf("for %s: %s", window, what)
	end := time.Now().Add(window)
	readings := 0
	for time.Now().Before(end) {
		n := e.specReplicas(ctx)
		readings++
		if !ok(n) {
			e.t.Fatalf("%s: read spec.replicas=%d after %d readings", what, n, readings)
		}
		time.Sleep(time.Second)
	}
	e.t.Logf("%s: %d readings, all accepted", what, readings)
}

func waitFor(t testing.TB, ctx context.Context, what string, timeout time.Duration, cond wait.ConditionWithContextFunc) {
	t.Helper()
	start := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(100*time.Millisecond))
}

func goBuild(t testing.TB, dir, pkg string) string {
	out := filepath.Join(dir, "bin", filepath.Base(pkg))
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func httpGet(t testing.TB, u string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func writeFileAtomic(t testing.TB, path, content string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func urnName(urn string) string {
	if i := strings.LastIndex(urn, "::"); i >= 0 {
		return urn[i+2:]
	}
	return urn
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logWriter sends whole lines to the test log (Pulumi's progress arrives in
// fragments: a dot per tick).
type logWriter struct {
	t   testing.TB
	buf *strings.Builder
}

func newLogWriter(t testing.TB) logWriter { return logWriter{t: t, buf: &strings.Builder{}} }

func (w logWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	s := w.buf.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		for _, line := range strings.Split(s[:i], "\n") {
			if strings.TrimSpace(strings.Trim(line, ".")) != "" {
				w.t.Log(line)
			}
		}
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}
