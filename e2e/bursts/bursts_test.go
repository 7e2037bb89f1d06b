package bursts

// BenchmarkBursts replays two seeded arrival traces (the burst trace, then
// the compressed day) against every pool policy at once, one trace after the
// other on one local control plane, prints per trace the trade-off table and
// the frontier verdict, and writes the pictures under docs/:
//
//	go test -C e2e -run '^$' -bench Bursts -benchtime 1x -timeout 90m ./bursts
//
// It is a measurement, not a test: nothing in it asserts a figure. Knobs:
//
//	BURSTS_SEED=N          both traces' seed (default: the published 20260513)
//	BURSTS_TRACES=day      which traces, in order (default burst,day)
//	BURSTS_DURATION=3m     cut both traces to this long (a smoke run)
//	BURSTS_FIXED=2,6,10    the fixed pool sizes (default FixedSweep of the trace's bound)
//	BURSTS_ARRIVALS=1      require the arrivals policy (fail if the program cannot render
//	                       it); 0 leaves it out; unset measures it when the program renders it
//	BURSTS_RECOMMEND=name  the policy whose timeline is drawn (default: Recommend's pick)
//	BURSTS_PLOTS=dir       where the pictures go (default the repository's docs/; "off": none)

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/poll"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The simulated cold start of a VM-isolated sandbox: uniform in (5 s, 6 s],
// the blueprint's measured 5-6 s.
var bootDelay = BootDelay{Boot: 6 * time.Second, RuntimeClassName: contract.RuntimeClassName}

// benchConfig is what the environment asks of one run.
type benchConfig struct {
	traces    []*replay.Trace
	fixed     string // BURSTS_FIXED, "" for the default sweep
	arrivals  string // BURSTS_ARRIVALS: "", "0" or "1"
	recommend string
	plots     string // directory, "" for none
}

func loadBenchConfig(getenv func(string) string) (*benchConfig, error) {
	cfg := &benchConfig{fixed: getenv("BURSTS_FIXED"), arrivals: getenv("BURSTS_ARRIVALS"), recommend: getenv("BURSTS_RECOMMEND")}
	switch cfg.arrivals {
	case "", "0", "1":
	default:
		return nil, fmt.Errorf("BURSTS_ARRIVALS=%q: want 1 (require), 0 (leave out) or nothing (measure it when the program renders it)", cfg.arrivals)
	}
	burst, day := replay.DefaultTraceParams(), replay.DefaultDayParams()
	if v := getenv("BURSTS_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("BURSTS_SEED=%q: %v", v, err)
		}
		burst.Seed, day.Seed = seed, seed
	}
	if v := getenv("BURSTS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("BURSTS_DURATION=%q: %v", v, err)
		}
		burst.Duration, day.Duration = d, d
	}
	names := getenv("BURSTS_TRACES")
	if names == "" {
		names = replay.TraceBurst + "," + replay.TraceDay
	}
	for _, n := range strings.Split(names, ",") {
		var tr *replay.Trace
		var err error
		switch strings.TrimSpace(n) {
		case replay.TraceBurst:
			tr, err = replay.GenerateTrace(burst)
		case replay.TraceDay:
			tr, err = replay.GenerateDay(day)
		default:
			err = fmt.Errorf("BURSTS_TRACES: unknown trace %q (want %s, %s or both)", n, replay.TraceBurst, replay.TraceDay)
		}
		if err != nil {
			return nil, err
		}
		cfg.traces = append(cfg.traces, tr)
	}
	switch v := getenv("BURSTS_PLOTS"); v {
	case "off":
	case "":
		// go test runs in the package's directory: the repository's docs/.
		cfg.plots = filepath.Join("..", "..", "docs")
	default:
		cfg.plots = v
	}
	return cfg, nil
}

// traceBound is the trace's peak of concurrent claims rounded up to 5 (at
// least 10, above every policy's headroom): the bound the blueprint's
// one-warm-sandbox-per-claim mapping needs so it is never clamped, and the
// largest fixed pool.
func traceBound(tr *replay.Trace) int { return max((tr.Peak()+4)/5*5, 10) }

// traceRun is one trace's outcome.
type traceRun struct {
	trace     *replay.Trace
	bound     int
	results   []Result
	timelines map[string]Timeline
	skipped   []string // policies not measured, and why
	boots     []time.Duration
}

func BenchmarkBursts(b *testing.B) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		b.Skipf("%s=1: the local control plane was not started; nothing measured", localcluster.SkipEnv)
	}
	cfg, err := loadBenchConfig(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	for _, tr := range cfg.traces {
		fmt.Fprintf(os.Stderr, "bursts: %s; pools bounded by [1, %d]\n", tr.Summary(), traceBound(tr))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Minute)
	defer cancel()
	// Not b.TempDir(): on failure the control plane's logs are kept for a look.
	work, err := os.MkdirTemp("", "bursts-")
	if err != nil {
		b.Fatal(err)
	}
	bc := startBenchCluster(b, ctx, work, "", localcluster.Options{Nodes: 4})
	defer bc.stop()
	c, rec, exporterBin := bc.c, bc.rec, bc.exporterBin

	b.ResetTimer()
	var runs []*traceRun
	for i, tr := range cfg.traces {
		if i > 0 {
			// The previous trace's namespaces go, so this one runs on a control plane as quiet as the first.
			clearNamespaces(b, ctx, c, runs[i-1])
		}
		runs = append(runs, runTrace(b, ctx, c, rec, cfg, tr, work, exporterBin))
	}
	b.StopTimer()

	for _, run := range runs {
		report(b, cfg, run)
	}
}

// runTrace replays one trace against every policy: renders and creates each
// policy's objects, starts the autoscaled policies' exporters, waits for the
// pools at rest, replays, and gathers the results.
func runTrace(b *testing.B, ctx context.Context, c *localcluster.Cluster, rec *Recorder, cfg *benchConfig, tr *replay.Trace, work, exporterBin string) *traceRun {
	run := &traceRun{trace: tr, bound: traceBound(tr), timelines: map[string]Timeline{}}
	sizes := FixedSweep(run.bound)
	if cfg.fixed != "" {
		var err error
		if sizes, err = ParseSizes(cfg.fixed, run.bound); err != nil {
			b.Fatalf("BURSTS_FIXED for the %s trace: %v", tr.Name, err)
		}
	}
	shared := map[string]string{
		"clusterMode": "existing", "kubeconfig": c.Kubeconfig, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt",
		"minReplicas": "1", "maxReplicas": strconv.Itoa(run.bound), "loadCap": "1",
		// The drop every figure of docs/bursts.md was measured with, and the model's zero ScaleDown.
		"scaleDown": framework.ImmediateScaleDown,
	}
	type rendered struct {
		p    Policy
		objs *Objects
		addr string
	}
	var todo []rendered
	for _, p := range Policies(tr.Name, 1, run.bound, sizes, cfg.arrivals != "0") {
		addr, url := "", ""
		if p.Autoscaled() {
			addr = freeAddr(b)
			url = "http://" + addr + contract.DemandPath
		}
		objs, err := Render(p, shared, url)
		if errors.Is(err, ErrArrivalsNotRendered) && cfg.arrivals == "" {
			msg := fmt.Sprintf("%s: not measured: %v (set BURSTS_ARRIVALS=1 to make this fatal)", p.Name, ErrArrivalsNotRendered)
			fmt.Fprintf(os.Stderr, "bursts: %s trace: %s\n", tr.Name, msg)
			run.skipped = append(run.skipped, msg)
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		todo = append(todo, rendered{p, objs, addr})
	}
	var policies []Policy
	exporters := process.NewSet(work, false)
	defer exporters.Stop(5 * time.Second)
	for _, r := range todo {
		if err := createObjects(ctx, c, r.objs); err != nil {
			b.Fatalf("policy %s: %v", r.p.Namespace(), err)
		}
		if so := r.objs.Find("scaledobjects"); so != nil {
			b.Logf("policy %s: ScaledObject spec %s", r.p.Namespace(), mustJSON(so.Object["spec"]))
		}
		if r.p.Autoscaled() {
			pools, err := ExporterPools(r.p, r.objs)
			if err != nil {
				b.Fatal(err)
			}
			startExporter(b, ctx, c, exporters, work, exporterBin, r.p, pools, r.addr)
		}
		policies = append(policies, r.p)
	}
	for _, p := range policies {
		waitPoolReady(b, ctx, c, p)
		if p.Autoscaled() {
			waitFor(b, ctx, p.Namespace()+": KEDA's HPA", 2*time.Minute, func(ctx context.Context) (bool, error) {
				_, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(p.Namespace()).Get(ctx, "keda-hpa-"+contract.ScaledObjectName, metav1.GetOptions{})
				return err == nil, nil
			})
		}
	}
	// Two syncs: every HPA has read the exporter and settled its pool at rest.
	time.Sleep(2 * replay.HPASyncPeriod)
	for _, p := range policies {
		waitPoolReady(b, ctx, c, p)
	}

	start := time.Now().Add(2 * time.Second)
	end := start.Add(tr.End())
	stopProgress := progress(ctx, c, policies, tr, start)
	errs := replayTrace(ctx, c, rec, tr, policies, start)
	stopProgress()
	if len(errs) > 0 {
		b.Fatalf("%s trace: %d claim requests failed; first: %v", tr.Name, len(errs), errs[0])
	}
	// Let the last Ready and delete events arrive.
	time.Sleep(3 * time.Second)
	for _, p := range policies {
		r := rec.Result(p, start, end)
		run.results = append(run.results, r)
		run.boots = append(run.boots, r.Boots...)
		if p.Autoscaled() {
			run.timelines[p.Name] = rec.Timeline(p, start, end)
		}
	}
	return run
}

// report prints one trace's tables and verdicts and writes its pictures.
func report(b *testing.B, cfg *benchConfig, run *traceRun) {
	tr := run.trace
	fmt.Printf("\n## %s trace\n\nTrace: %s.\n", tr.Name, tr.Summary())
	fmt.Printf("Parameters: %+v\n", tr.Params)
	lo, hi := bootDelay.Range()
	fmt.Printf("Pools bounded by [1, %d]; HPA sync %s; simulated boot uniform in (%s, %s] from the binding to a node, observed (first seen -> Ready) over %d sandboxes: p50 %s, p95 %s, max %s.\n\n",
		run.bound, replay.HPASyncPeriod, lo, hi, len(run.boots), secs(replay.Percentile(run.boots, 50)), secs(replay.Percentile(run.boots, 95)), secs(replay.Percentile(run.boots, 100)))
	fmt.Print(Table(run.results))
	for _, s := range run.skipped {
		fmt.Printf("\n%s\n", s)
	}
	var points []Point
	for _, r := range run.results {
		points = append(points, PointOf(r))
		b.ReportMetric(r.WarmShare(), tr.Name+"-"+r.Policy.Name+"-warm-%")
		b.ReportMetric(r.IdleWarm, tr.Name+"-"+r.Policy.Name+"-idle-warm-pod-s")
	}
	verdicts := Verdicts(points, GoalShare)
	fmt.Printf("\nFrontier verdict (%s trace): the fixed pools' frontier is %s.\n\n", tr.Name, frontierLine(Frontier(points)))
	fmt.Print(VerdictTable(verdicts, GoalShare))
	fmt.Println()
	withRatio := tr.Name == replay.TraceDay
	for _, v := range verdicts {
		if v.Fixed == 0 {
			ok, msg := MeetsGoal(v, withRatio)
			fmt.Printf("goal %s: %s\n", map[bool]string{true: "MET", false: "NOT MET"}[ok], msg)
		}
	}
	rec, ok := Recommend(verdicts, cfg.recommend)
	if !ok {
		fmt.Printf("no autoscaled policy to recommend (BURSTS_RECOMMEND=%q)\n", cfg.recommend)
		return
	}
	fmt.Printf("recommended on the %s trace: %s (%.1f%% warm hits, %.0f idle warm-pod-s)\n", tr.Name, rec.Name, rec.Warm, rec.Idle)
	if cfg.plots == "" {
		return
	}
	frontierPath := filepath.Join(cfg.plots, "bursts-"+tr.Name+"-frontier.png")
	timelinePath := filepath.Join(cfg.plots, "bursts-"+tr.Name+"-timeline.png")
	title := fmt.Sprintf("%s trace (seed %d, %d claims): warm hits against idle cost", tr.Name, tr.Seed, len(tr.Arrivals))
	if err := FrontierPlot(frontierPath, title, points); err != nil {
		b.Errorf("%v", err)
	}
	tl := run.timelines[rec.Name]
	tl.Demand = DemandSteps(tr)
	if err := TimelinePlot(timelinePath, fmt.Sprintf("%s trace (seed %d): demand and the %s pool", tr.Name, tr.Seed, rec.Name), tl); err != nil {
		b.Errorf("%v", err)
	}
	fmt.Printf("wrote %s and %s\n", frontierPath, timelinePath)
}

func frontierLine(front []Point) string {
	var parts []string
	for _, p := range front {
		parts = append(parts, fmt.Sprintf("%d (%.1f%%, %.0f)", p.Fixed, p.Warm, p.Idle))
	}
	if len(parts) == 0 {
		return "empty (no fixed pools)"
	}
	return strings.Join(parts, ", ")
}

// clearNamespaces deletes a finished trace's namespaces and waits (a few
// minutes at most) until they are gone.
func clearNamespaces(b *testing.B, ctx context.Context, c *localcluster.Cluster, run *traceRun) {
	var nss []string
	for _, r := range run.results {
		nss = append(nss, r.Policy.Namespace())
	}
	for _, ns := range nss {
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			b.Fatalf("deleting namespace %s: %v", ns, err)
		}
	}
	err := poll.Until(ctx, 4*time.Minute, time.Second, func(ctx context.Context) (bool, error) {
		for _, ns := range nss {
			if _, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("namespace %s still there (%v)", ns, err)
			}
		}
		return true, nil
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bursts: the %s trace's namespaces are not all gone after 4 min (%v); going on\n", run.trace.Name, err)
	}
}

// replayTrace creates and deletes every arrival's claim in every policy's
// namespace at the same moment (start + At, start + At + Lifetime). Requests
// run concurrently so one slow answer never delays the schedule.
func replayTrace(ctx context.Context, c *localcluster.Cluster, rec *Recorder, tr *replay.Trace, policies []Policy, start time.Time) []error {
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
				claims := c.Dynamic.Resource(gvr.SandboxClaim).Namespace(ns)
				if !ev.create {
					rec.Deleting(ns, ev.name, time.Now())
					if err := claims.Delete(ctx, ev.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						fail(fmt.Errorf("%s: deleting %s: %w", ns, ev.name, err))
					}
					return
				}
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": gvr.SandboxClaim.GroupVersion().String(), "kind": "SandboxClaim",
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
func progress(ctx context.Context, c *localcluster.Cluster, policies []Policy, tr *replay.Trace, start time.Time) func() {
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
				u, err := c.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(p.Namespace()).Get(ctx, contract.DefaultPoolName, metav1.GetOptions{})
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

func waitPoolReady(b testing.TB, ctx context.Context, c *localcluster.Cluster, p Policy) {
	waitFor(b, ctx, p.Namespace()+": the pool Ready at its size", 3*time.Minute, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(p.Namespace()).Get(ctx, contract.DefaultPoolName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		spec, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		// A pool that may scale to zero rests at 0; the others at their floor or above.
		return ready == spec && (spec > 0 || p.Config["minReplicas"] == "0"), nil
	})
}

// startExporter runs the exporter as a local process with a TokenRequest
// token of the ServiceAccount the program made for it, as the end-to-end
// test does, and waits until it serves a count (and, for a policy sized by
// arrivals, the arrival counts). pools is its EXPORTER_POOLS ("" to run it
// as today, on the policy's namespace).
func startExporter(b testing.TB, ctx context.Context, c *localcluster.Cluster, procs *process.Set, work, bin string, p Policy, pools, addr string) {
	ns := p.Namespace()
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
	e := framework.LocalExporter{Binary: bin, APIURL: c.APIServerURL, TokenFile: tokenFile, CAFile: c.CAFile, Addr: addr}
	if pools == "" {
		e.Namespace = ns
	} else {
		e.Pools = pools // the contract's multi-pool interface: the pools, their namespaces and arrival windows
	}
	name := ns + "-exporter"
	if _, err := e.Start(ctx, procs, name); err != nil {
		b.Fatal(err)
	}
	want := `"active_claims":0`
	if p.UsesArrivals() {
		want = `"` + arrivalsShortField + `":0`
	}
	waitFor(b, ctx, ns+": the exporter serving "+want+" (its log: "+procs.LogPath(name)+")", time.Minute, func(context.Context) (bool, error) {
		code, body := httpGet(e.DemandURL())
		return code == http.StatusOK && strings.Contains(body, want), nil
	})
}

// createObjects creates a policy's objects in order, namespaced ones in their namespace.
func createObjects(ctx context.Context, c *localcluster.Cluster, objs *Objects) error {
	for i, o := range objs.Items {
		res := c.Dynamic.Resource(objs.GVRs[i])
		var err error
		if o.GetNamespace() == "" {
			_, err = res.Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err = res.Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func waitFor(b testing.TB, ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	b.Helper()
	framework.Eventually(b, ctx, what, timeout, cond)
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

func freeAddr(b testing.TB) string {
	addr, err := freeport.Addr()
	if err != nil {
		b.Fatal(err)
	}
	return addr
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
