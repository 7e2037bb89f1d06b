package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/tcpproxy"
)

// env is one end-to-end run on simulated nodes: the stack, and the exporter as a local process
// beside the control plane (so the fault tests can stop it, cut its path and rotate its token).
type env struct {
	stackRun

	apiProxy   *tcpproxy.Proxy
	exporter   framework.LocalExporter
	procs      *process.Set // the exporter's process
	firstToken string       // revoked by the rotation fault
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

// newEnv starts a local control plane of its own with simulated nodes and prepares the stack
// on it (newLocalExporterEnv, stack "e2e"): the reaction-latency benchmark's run.
func newEnv(t testing.TB, ctx context.Context, hpaSync time.Duration) *env {
	work := t.TempDir()
	c := startCluster(t, ctx, work, localcluster.Options{HPASyncPeriod: hpaSync}, "")
	return newLocalExporterEnv(t, ctx, c, work, "e2e", nil)
}

// newLocalExporterEnv prepares, on the control plane c, everything the product needs beside it
// when its exporter is a local process (the exporter binary, the cuttable path to the API
// server) and the stack stackName (existing/require/adopt/adopt modes, exporterUrl the local
// exporter's), its config changed by with (nil: none); the caller runs up.
func newLocalExporterEnv(t testing.TB, ctx context.Context, c *localcluster.Cluster, work, stackName string, with map[string]string) *env {
	e := &env{exporter: framework.LocalExporter{Addr: freeAddr(t)}}
	e.stackRun = newStackRun(t, ctx, c, work, stackName, func(kubeconfig []byte) map[string]string {
		cfg := framework.LocalStackConfig(kubeconfig, e.demandURL())
		for k, v := range with {
			cfg[k] = v
		}
		return cfg
	})
	e.procs = process.NewSet(e.work, false)
	// Registered after the control plane's cleanup, so it runs before it.
	t.Cleanup(func() {
		e.procs.Stop(5 * time.Second)
		if t.Failed() {
			if b, err := os.ReadFile(e.procs.LogPath(exporterProcess)); err == nil {
				t.Logf("exporter log (last 3000 bytes):\n%s", lastBytes(string(b), 3000))
			}
		}
	})
	apiURL, _ := url.Parse(e.cluster.APIServerURL)
	var err error
	if e.apiProxy, err = tcpproxy.Start(apiURL.Host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.apiProxy.Close() })
	e.exporter.Binary = goBuild(t, e.work, framework.ExporterCommand)
	e.exporter.APIURL = "https://" + e.apiProxy.Addr()
	e.exporter.CAFile = e.cluster.CAFile
	e.exporter.TokenFile = filepath.Join(e.work, "exporter-token")
	return e
}

// up runs pulumi up and checks the outputs verify reads; the pool starts at its floor.
func (e *env) up(ctx context.Context, t testing.TB) {
	e.upStack(ctx, t)
	out := e.outputs
	if !out.Secret["kubeconfig"] {
		t.Errorf("the kubeconfig output is not a secret")
	}
	if got := out.String("exporterUrl"); got != e.config["exporterUrl"] {
		t.Errorf("exporterUrl output %q, want the configured %q", got, e.config["exporterUrl"])
	}
	ns, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s after up: %v", e.ns, err)
	}
	t.Logf("namespace %s labels %v", e.ns, ns.Labels)
	e.waitSpecReplicas(ctx, t, 1, 2*time.Minute)
}

// exporterProcess is the local exporter's process name (and log name).
const exporterProcess = "claim-exporter"

// startExporterWithToken runs the exporter as a local process with a real
// token of its ServiceAccount, through the cuttable proxy to the API server.
func (e *env) startExporterWithToken(ctx context.Context, t testing.TB) {
	e.exporter.Namespace = e.ns
	e.firstToken = e.boundToken(ctx, t, "exporter-token-1")
	writeFileAtomic(t, e.exporter.TokenFile, e.firstToken)
	e.startExporter(t)
	e.waitDemand(ctx, t, 0, true, time.Minute)
}

// startExporter starts the exporter, or starts it again with its first command after
// stopExporter, and waits for its /healthz.
func (e *env) startExporter(t testing.TB) {
	ctx := context.Background()
	p := e.procs.Get(exporterProcess)
	if p == nil {
		if _, err := e.exporter.Start(ctx, e.procs, exporterProcess); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := e.procs.Restart(exporterProcess); err != nil {
		t.Fatal(err)
	}
	if err := process.WaitHealthy(ctx, e.procs.Get(exporterProcess), e.exporter.HealthzURL(), nil, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// stopExporter kills the exporter (as a crash would) when it runs.
func (e *env) stopExporter() {
	if p := e.procs.Get(exporterProcess); p != nil && p.Running() {
		_ = e.procs.Kill(exporterProcess)
	}
}

// boundToken is a token of the exporter's ServiceAccount bound to a Secret of that name, so
// deleting the Secret revokes it.
func (e *env) boundToken(ctx context.Context, t testing.TB, secret string) string {
	tok, err := framework.BoundToken(ctx, e.cluster.Client, e.ns, e.outputs.String("exporterServiceAccount"), secret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (e *env) tokenRejected(token string) bool {
	cfg := rest.AnonymousClientConfig(e.cluster.Config)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false
	}
	_, err = cs.Discovery().ServerVersion()
	return apierrors.IsUnauthorized(err)
}

func (e *env) demandURL() string { return e.exporter.DemandURL() }

func (e *env) waitDemand(ctx context.Context, t testing.TB, n int64, fresh bool, timeout time.Duration) {
	framework.Eventually(t, ctx, fmt.Sprintf("the exporter to serve active_claims=%d fresh=%v", n, fresh), timeout, func(context.Context) (bool, error) {
		d, err := framework.Demand(e.demandURL())
		return err == nil && d.ActiveClaims == n && d.Fresh == fresh, err
	})
}

// deleteClaims deletes claims by exact name and waits for the pool's floor.
func (e *env) deleteClaims(ctx context.Context, t testing.TB, names []string) {
	for _, n := range names {
		e.deleteClaim(ctx, t, n)
	}
	e.waitSpecReplicas(ctx, t, 1, 2*time.Minute)
}

// specReplicas reads the pool's spec.replicas; a failed read is an error, never a value.
func (e *stackRun) specReplicas(ctx context.Context) (int64, error) {
	u, err := e.cluster.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(e.ns).Get(ctx, e.pool, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("reading pool %s/%s: %w", e.ns, e.pool, err)
	}
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found || err != nil {
		return 0, fmt.Errorf("pool %s/%s has no spec.replicas (%v)", e.ns, e.pool, err)
	}
	return n, nil
}

func (e *env) waitSpecReplicas(ctx context.Context, t testing.TB, want int64, timeout time.Duration) {
	framework.Eventually(t, ctx, fmt.Sprintf("spec.replicas=%d", want), timeout, func(ctx context.Context) (bool, error) {
		n, err := e.specReplicas(ctx)
		return err == nil && n == want, err
	})
}

// consistently reads spec.replicas every second for the whole window and fails at the first
// reading ok rejects (or that cannot be read).
func (e *env) consistently(ctx context.Context, t testing.TB, what string, window time.Duration, ok func(int64) bool) {
	framework.Consistently(t, ctx, what, window, func(ctx context.Context) (bool, string, error) {
		n, err := e.specReplicas(ctx)
		return ok(n), fmt.Sprintf("spec.replicas=%d", n), err
	})
}

// --- small helpers over the framework, failing t ---------------------------

func goBuild(t testing.TB, dir, pkg string) string {
	bin, err := framework.GoBuild(framework.NewLogWriter(t), dir, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func freeAddr(t testing.TB) string {
	a, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return a
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
