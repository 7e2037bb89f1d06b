package bursts

// BenchmarkBursts replays one seeded arrival trace against every pool policy
// at once, on one local control plane, and prints the trade-off table:
//
//	go test -run '^$' -bench Bursts -benchtime 1x -timeout 60m ./e2e/bursts
//
// It is a measurement, not a test: nothing in it asserts a figure.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
)

// The simulated cold start of a VM-isolated sandbox: uniform in (5 s, 6 s],
// the blueprint's measured 5-6 s.
var bootDelay = BootDelay{Boot: 6 * time.Second, RuntimeClassName: contract.RuntimeClassName}

// hpaSync is EKS's HPA sync period, the one every policy runs under.
const hpaSync = 15 * time.Second

func BenchmarkBursts(b *testing.B) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		b.Skipf("%s=1: the local control plane was not started; nothing measured", localcluster.SkipEnv)
	}
	params := DefaultTraceParams()
	if v := os.Getenv("BURSTS_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			b.Fatalf("BURSTS_SEED=%q: %v", v, err)
		}
		params.Seed = seed
	}
	if v := os.Getenv("BURSTS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("BURSTS_DURATION=%q: %v", v, err)
		}
		params.Duration = d
	}
	tr, err := GenerateTrace(params)
	if err != nil {
		b.Fatal(err)
	}
	// The maximum is the trace's peak of concurrent claims, rounded up to 5
	// (at least 10, above every policy's headroom): the bound the blueprint's
	// one-warm-sandbox-per-claim mapping needs so it is never clamped, and the
	// size of the fixed pool at the maximum.
	peak := 0
	for _, a := range tr.Arrivals {
		peak = max(peak, tr.ActiveAt(a.At))
	}
	maxReplicas := max((peak+4)/5*5, 10)
	policies := Policies(1, maxReplicas)
	fmt.Fprintf(os.Stderr, "bursts: trace %s; pools bounded by [1, %d]\n", tr.Summary(), maxReplicas)

	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	// Not b.TempDir(): on failure the control plane's logs are kept for a look.
	work, err := os.MkdirTemp("", "bursts-")
	if err != nil {
		b.Fatal(err)
	}
	c, err := localcluster.Start(ctx, localcluster.Options{
		StateDir: filepath.Join(work, "cluster"), Nodes: 4, HPASyncPeriod: hpaSync,
		KwokStages: bootDelay.Stages, Progress: prefixed("localcluster"),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			b.Errorf("stopping the control plane: %v", err)
		}
		if b.Failed() {
			b.Logf("kept for a look: the control plane's logs in %s, the exporters' in %s", filepath.Join(c.StateDir, "logs"), work)
			return
		}
		_ = os.RemoveAll(work)
	}()
	rec := NewRecorder()
	if !rec.Start(ctx, c.Dynamic) {
		b.Fatal("the sandbox and claim informers never synced")
	}

	exporterBin := filepath.Join(work, "claim-exporter")
	if out, err := exec.Command("go", "build", "-o", exporterBin, "github.com/warmpool/warm-pool-autoscaling-keda/exporter/cmd/claim-exporter").CombinedOutput(); err != nil {
		b.Fatalf("building the exporter: %v\n%s", err, out)
	}
	shared := map[string]string{
		"clusterMode": "existing", "kubeconfig": c.Kubeconfig, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt",
		"minReplicas": "1", "maxReplicas": strconv.Itoa(maxReplicas), "loadCap": "1",
	}
	var exporters []*exec.Cmd
	defer func() {
		for _, e := range exporters {
			_ = e.Process.Kill()
			_ = e.Wait()
		}
	}()
	for _, p := range policies {
		addr, url := "", ""
		if p.Autoscaled() {
			addr = freeAddr(b)
			url = "http://" + addr + "/demand"
		}
		objs, err := Render(p, shared, url)
		if err != nil {
			b.Fatal(err)
		}
		for i, o := range objs.Items {
			r := c.Dynamic.Resource(objs.GVRs[i])
			var err error
			if o.GetNamespace() == "" {
				_, err = r.Create(ctx, o, metav1.CreateOptions{})
			} else {
				_, err = r.Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{})
			}
			if err != nil {
				b.Fatalf("policy %s: creating %s %s: %v", p.Name, o.GetKind(), o.GetName(), err)
			}
		}
		if so := objs.Find("scaledobjects"); so != nil {
			b.Logf("policy %s: ScaledObject spec %s", p.Name, mustJSON(so.Object["spec"]))
		}
		if p.Autoscaled() {
			exporters = append(exporters, startExporter(b, ctx, c, work, exporterBin, p.Namespace(), addr))
		}
	}
	for _, p := range policies {
		waitPoolReady(b, ctx, c, p)
		if p.Autoscaled() {
			waitFor(b, ctx, p.Name+": KEDA's HPA", 2*time.Minute, func(ctx context.Context) (bool, error) {
				_, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(p.Namespace()).Get(ctx, "keda-hpa-"+contract.ScaledObjectName, metav1.GetOptions{})
				return err == nil, nil
			})
		}
	}
	// Two syncs: every HPA has read the exporter and settled its pool at rest.
	time.Sleep(2 * hpaSync)
	for _, p := range policies {
		waitPoolReady(b, ctx, c, p)
	}

	b.ResetTimer()
	start := time.Now().Add(2 * time.Second)
	end := start.Add(tr.End())
	stopProgress := progress(ctx, c, policies, tr, start)
	errs := replay(ctx, c, rec, tr, policies, start)
	stopProgress()
	b.StopTimer()
	if len(errs) > 0 {
		b.Fatalf("%d claim requests failed; first: %v", len(errs), errs[0])
	}
	// Let the last Ready and delete events arrive.
	time.Sleep(3 * time.Second)

	results := make([]Result, len(policies))
	var boots []time.Duration
	for i, p := range policies {
		results[i] = rec.Result(p, start, end)
		boots = append(boots, results[i].Boots...)
	}
	fmt.Printf("\nTrace: %s.\n", tr.Summary())
	fmt.Printf("Parameters: %+v\n", params)
	lo, hi := bootDelay.Range()
	fmt.Printf("Pools bounded by [1, %d]; HPA sync %s; simulated boot uniform in (%s, %s] from creation, observed (first seen -> Ready) over %d sandboxes: p50 %s, p95 %s, max %s.\n\n",
		maxReplicas, hpaSync, lo, hi, len(boots), secs(Percentile(boots, 50)), secs(Percentile(boots, 95)), secs(Percentile(boots, 100)))
	fmt.Print(Table(results))
	fmt.Println()
	var fixedMax Result
	for _, r := range results {
		if r.Policy.Name == "fixed-max" {
			fixedMax = r
		}
	}
	for _, r := range results {
		if r.Policy.Autoscaled() {
			ok, msg := Verdict(r, fixedMax)
			fmt.Printf("goal %s: %s\n", map[bool]string{true: "MET", false: "NOT MET"}[ok], msg)
		}
		b.ReportMetric(r.WarmShare(), r.Policy.Name+"-warm-%")
		b.ReportMetric(r.IdleWarm, r.Policy.Name+"-idle-warm-pod-s")
		b.ReportMetric(r.Latency(95).Seconds(), r.Policy.Name+"-p95-s")
	}
}

// replay creates and deletes every arrival's claim in every policy's
// namespace at the same moment (start + At, start + At + Lifetime). Requests
// run concurrently so one slow answer never delays the schedule.
func replay(ctx context.Context, c *localcluster.Cluster, rec *Recorder, tr *Trace, policies []Policy, start time.Time) []error {
	type event struct {
		at     time.Duration
		name   string
		create bool
	}
	var events []event
	for i, a := range tr.Arrivals {
		name := fmt.Sprintf("claim-%04d", i+1)
		events = append(events, event{a.At, name, true}, event{a.At + a.Lifetime, name, false})
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for _, ev := range events {
		if d := time.Until(start.Add(ev.at)); d > 0 {
			select {
			case <-ctx.Done():
				return append(errs, ctx.Err())
			case <-time.After(d):
			}
		}
		for _, p := range policies {
			wg.Add(1)
			go func(ns string, ev event) {
				defer wg.Done()
				claims := c.Dynamic.Resource(claimGVR).Namespace(ns)
				if !ev.create {
					if err := claims.Delete(ctx, ev.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						fail(fmt.Errorf("%s: deleting %s: %w", ns, ev.name, err))
					}
					return
				}
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": claimGVR.GroupVersion().String(), "kind": "SandboxClaim",
					"metadata": map[string]any{"name": ev.name},
					"spec":     map[string]any{"warmPoolRef": map[string]any{"name": contract.DefaultPoolName}},
				}}
				rec.Creating(ns, ev.name, time.Now())
				if _, err := claims.Create(ctx, u, metav1.CreateOptions{}); err != nil {
					fail(fmt.Errorf("%s: creating %s: %w", ns, ev.name, err))
				}
			}(p.Namespace(), ev)
		}
	}
	wg.Wait()
	return errs
}

// progress prints, every minute, the demand and each pool's spec.replicas.
func progress(ctx context.Context, c *localcluster.Cluster, policies []Policy, tr *Trace, start time.Time) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			at := time.Since(start)
			var parts []string
			for _, p := range policies {
				u, err := c.Dynamic.Resource(localcluster.SandboxWarmPoolGVR).Namespace(p.Namespace()).Get(ctx, contract.DefaultPoolName, metav1.GetOptions{})
				if err != nil {
					parts = append(parts, p.Name+"=?")
					continue
				}
				spec, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
				ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
				parts = append(parts, fmt.Sprintf("%s=%d/%d", p.Name, ready, spec))
			}
			fmt.Fprintf(os.Stderr, "bursts: t=%s of %s, %d claims live; pools ready/spec: %s\n",
				at.Round(time.Second), tr.End().Round(time.Second), tr.ActiveAt(at), strings.Join(parts, " "))
		}
	}()
	return func() { close(done) }
}

func waitPoolReady(b *testing.B, ctx context.Context, c *localcluster.Cluster, p Policy) {
	waitFor(b, ctx, p.Name+": the pool Ready at its size", 3*time.Minute, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(localcluster.SandboxWarmPoolGVR).Namespace(p.Namespace()).Get(ctx, contract.DefaultPoolName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		spec, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return spec > 0 && ready == spec, nil
	})
}

// startExporter runs the exporter as a local process with a TokenRequest
// token of the ServiceAccount the program made for it, as the end-to-end
// test does, and waits until it serves a count.
func startExporter(b *testing.B, ctx context.Context, c *localcluster.Cluster, work, bin, ns, addr string) *exec.Cmd {
	exp := int64(3 * 3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, contract.ExporterName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatalf("TokenRequest for %s/%s: %v", ns, contract.ExporterName, err)
	}
	tokenFile := filepath.Join(work, ns+".token")
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		b.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(work, ns+"-exporter.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--api-url", c.APIServerURL, "--token-file", tokenFile, "--ca-file", c.CAFile,
		"--namespace", ns, "--listen", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	waitFor(b, ctx, ns+": the exporter serving a count", time.Minute, func(context.Context) (bool, error) {
		code, body := httpGet("http://" + addr + "/demand")
		return code == http.StatusOK && strings.Contains(body, `"active_claims":0`), nil
	})
	return cmd
}

func waitFor(b *testing.B, ctx context.Context, what string, timeout time.Duration, cond wait.ConditionWithContextFunc) {
	b.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, cond); err != nil {
		b.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func httpGet(u string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func mustJSON(v any) string {
	out, _ := json.Marshal(v)
	return string(out)
}

// prefixed writes each line to stderr with a prefix, so the control plane's
// progress shows while the benchmark runs.
func prefixed(prefix string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			fmt.Fprintf(os.Stderr, "%s: %s\n", prefix, strings.TrimPrefix(line, prefix+": "))
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
