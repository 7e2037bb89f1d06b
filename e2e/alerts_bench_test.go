package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
)

// The live alert table's Prometheus: EKS-like scrape and evaluation intervals.
const (
	alertsScrapeInterval = 15 * time.Second
	alertsEvalInterval   = 15 * time.Second
	// alertsQuiet is how long the healthy stack is watched with no alert firing before the
	// first failure, and the most a restored controller's alerts may take to clear.
	alertsQuiet = 3 * time.Minute
	// alertsQuietAfter is how long a restored stack is watched with none firing before the next
	// failure (one scrape, evaluation and a margin: a rule that fires again on a healthy stack
	// does so at its next evaluation).
	alertsQuietAfter = time.Minute
)

// alertFailure is one failure made for real, the alert it must raise, and the alerts that may
// fire beside it because the same failure is theirs too (said in the table, never taken as quiet).
type alertFailure struct {
	what     string
	alert    string
	forDur   time.Duration // the rule's for:
	also     []string
	make     func(ctx context.Context, b *testing.B)
	restore  func(ctx context.Context, b *testing.B)
	settleIn time.Duration // the most the alerts may take to clear once restored
}

// alertRow is what one failure gave.
type alertRow struct {
	failure      alertFailure
	toFiring     time.Duration // failure made -> the alert read as firing
	pendingAt    time.Duration // failure made -> the alert's activeAt (its condition first true)
	othersFiring []string      // alerts neither expected nor allowed that fired meanwhile
	alsoFired    []string
}

// BenchmarkLiveAlerts is the live alert table: the stack on a local control plane (simulated
// nodes; KEDA, agent-sandbox and the exporter as local processes), kube-state-metrics and a real
// Prometheus (both built from the module proxy) scraping every source the rules read, with the
// rules monitoring.Rules renders for this stack as an install-mode stack gets them (the
// controllers' rules included; scraped as the Prometheus Operator scrapes a ServiceMonitor
// without honorLabels, kube-state-metrics with them). The healthy stack is watched with no alert
// firing; then each failure is made for real, one at a time, and the alert it must raise is read
// as firing from Prometheus's /api/v1/alerts, with the seconds it took and every other alert
// that fired meanwhile; then the failure is undone and the stack must go quiet again. The
// thresholds are the defaults a stack gets. It is a measurement: it fails only when an alert
// never fires, or fires where none should.
//
//	go test -C e2e -run '^$' -bench LiveAlerts -benchtime 1x -timeout 90m .
//
// LIVEALERTS_ONLY=WarmPoolPinnedAtMax,... runs only the failures of those alerts (the healthy
// watch still first).
func BenchmarkLiveAlerts(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Minute)
	defer cancel()
	e := newEnv(b, ctx, 15*time.Second)
	e.up(ctx, b)
	e.startExporterWithToken(ctx, b)
	bins, err := toolcache.Ensure(ctx, framework.NewLogWriter(b), slices.Concat(toolcache.KubeStateMetrics, toolcache.PrometheusServer)...)
	if err != nil {
		b.Fatal(err)
	}
	th := monitoring.DefaultThresholds()
	spec := monitoring.Spec{
		// No ExporterPool: the local exporter counts the stack's one pool from its namespace and
		// labels no pool, as the program's exporter of one pool does.
		Pools: []monitoring.Pool{{Name: e.pool, Namespace: e.ns, ScaledObject: e.outputs.String("scaledObjectName"),
			HPA: contract.KedaHPAPrefix + e.outputs.String("scaledObjectName")}},
		ExporterNamespace: e.outputs.String("stackNamespace"), ExporterJob: contract.ExporterName,
		NamespaceLabel: "exported_namespace", FallbackFailureThreshold: components.FallbackFailureThreshold,
		Controllers: monitoring.InstalledControllers(true, true), Thresholds: th,
	}
	if spec.ExporterNamespace == "" {
		spec.ExporterNamespace = e.ns
	}
	prom := startAlertsPrometheus(b, ctx, e, bins, spec)

	framework.Eventually(b, ctx, "every scrape target up", 2*time.Minute, func(ctx context.Context) (bool, error) {
		down, err := prom.targetsDown(ctx)
		if err == nil && len(down) > 0 {
			b.Logf("targets not up yet: %v", down)
		}
		return err == nil && len(down) == 0, err
	})
	quiet := func(what string, window time.Duration) {
		framework.Consistently(b, ctx, what, window, func(ctx context.Context) (bool, string, error) {
			firing, err := prom.firing(ctx)
			return len(firing) == 0, fmt.Sprint(firing), err
		})
	}
	quiet("no alert fires on the healthy stack", alertsQuiet)

	d := func(s string) time.Duration {
		v, ok := monitoring.ParseDuration(s)
		if !ok {
			b.Fatalf("threshold %q is not a duration", s)
		}
		return v
	}
	failures := []alertFailure{
		e.roleDeleted(d(th.FrozenFor)),
		{what: "every exporter replica gone (its process stopped)", alert: monitoring.AlertExporterDown, forDur: d(th.ExporterDownFor),
			also: []string{monitoring.AlertPoolFrozen}, // KEDA's reads of the pool fail: the read path is broken
			make: func(context.Context, *testing.B) { e.stopExporter() }, restore: func(_ context.Context, b *testing.B) { e.startExporter(b) },
			settleIn: 8 * time.Minute}, // the frozen rule reads KEDA's failures over FrozenWindow (5m)
		e.controllerDown("keda-operator", "KEDA's operator stopped", monitoring.AlertKedaOperatorDown, d(th.ControllerDownFor)),
		e.controllerDown("keda-adapter", "KEDA's metrics server stopped", monitoring.AlertKedaMetricsDown, d(th.ControllerDownFor)),
		e.controllerDown("agent-sandbox-controller", "agent-sandbox's controller stopped", monitoring.AlertAgentSandboxDown, d(th.ControllerDownFor)),
		e.cappedUnderLoad(d(th.PinnedFor)),
	}
	if only := os.Getenv("LIVEALERTS_ONLY"); only != "" { // a subset, by alert name: a shorter run while working on one
		var keep []alertFailure
		for _, f := range failures {
			if slices.Contains(strings.Split(only, ","), f.alert) {
				keep = append(keep, f)
			}
		}
		if len(keep) == 0 {
			b.Fatalf("LIVEALERTS_ONLY=%q names none of the table's alerts", only)
		}
		failures = keep
	}
	var rows []alertRow
	for _, f := range failures {
		rows = append(rows, runAlertFailure(b, ctx, prom, f))
		quiet("no alert fires once "+f.what+" is undone", alertsQuietAfter)
	}
	fmt.Printf("\n## The live alert table\n\nPrometheus %s scraping every %s, rules evaluated every %s; kube-state-metrics %s; default thresholds.\n\n",
		contract.PrometheusRelease, alertsScrapeInterval, alertsEvalInterval, contract.KubeStateMetricsModule)
	fmt.Print(alertTable(rows))
}

// runAlertFailure makes f, waits for its alert to fire, records what else fired, undoes it and
// waits for every alert to clear.
func runAlertFailure(b *testing.B, ctx context.Context, prom *alertsPrometheus, f alertFailure) alertRow {
	b.Logf("failure: %s (expect %s, for: %s)", f.what, f.alert, f.forDur)
	row := alertRow{failure: f}
	at := time.Now()
	f.make(ctx, b)
	seen := map[string]bool{}
	framework.Eventually(b, ctx, f.alert+" firing after "+f.what, f.forDur+4*time.Minute, func(ctx context.Context) (bool, error) {
		alerts, err := prom.alerts(ctx)
		if err != nil {
			return false, err
		}
		done := false
		for _, a := range alerts {
			if a.State != "firing" {
				continue
			}
			seen[a.Name] = true
			if a.Name == f.alert {
				done = true
				row.toFiring = time.Since(at)
				row.pendingAt = a.ActiveAt.Sub(at)
			}
		}
		return done, nil
	})
	f.restore(ctx, b)
	// Until no alert is even pending: an alert of the same cause may still fire after the undo (the
	// frozen rule reads KEDA's failures over five minutes), and it is this row's, not the next's.
	framework.Eventually(b, ctx, "no alert firing or pending once "+f.what+" is undone", f.settleIn, func(ctx context.Context) (bool, error) {
		alerts, err := prom.alerts(ctx)
		if err != nil {
			return false, err
		}
		for _, a := range alerts {
			if a.State == "firing" {
				seen[a.Name] = true
			}
		}
		return len(alerts) == 0, nil
	})
	for n := range seen {
		switch {
		case n == f.alert:
		case slices.Contains(f.also, n):
			row.alsoFired = append(row.alsoFired, n)
		default:
			row.othersFiring = append(row.othersFiring, n)
		}
	}
	sort.Strings(row.alsoFired)
	sort.Strings(row.othersFiring)
	if len(row.othersFiring) > 0 {
		b.Errorf("%s: alerts fired that this failure does not explain: %v", f.what, row.othersFiring)
	}
	bound := f.forDur + alertsEvalInterval + alertsScrapeInterval
	b.Logf("%s: %s firing after %s (condition true after %s; for: %s; for + one evaluation + one scrape: %s); also fired (same cause): %v; others: %v",
		f.what, f.alert, row.toFiring.Round(time.Second), row.pendingAt.Round(time.Second), f.forDur, bound, row.alsoFired, row.othersFiring)
	return row
}

// alertTable is the rows as Markdown.
func alertTable(rows []alertRow) string {
	var s strings.Builder
	s.WriteString("| failure made | alert | for: | condition true after | firing after | also fired (same cause) | others |\n|---|---|---:|---:|---:|---|---|\n")
	noneOr := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	for _, r := range rows {
		fmt.Fprintf(&s, "| %s | `%s` | %s | %.0f s | %.0f s | %s | %s |\n", r.failure.what, r.failure.alert, r.failure.forDur,
			r.pendingAt.Seconds(), r.toFiring.Seconds(), noneOr(r.alsoFired), noneOr(r.othersFiring))
	}
	return s.String()
}

// roleDeleted deletes the Role the exporter's ServiceAccount is bound to in the pool's
// namespace: its reads get 403, and it serves the last good count with its freshness gauge at 0.
func (e *env) roleDeleted(forDur time.Duration) alertFailure {
	var saved *rbacv1.Role
	return alertFailure{what: "the exporter's Role deleted (its reads refused: 403)", alert: monitoring.AlertCountStale, forDur: forDur,
		make: func(ctx context.Context, b *testing.B) {
			sa := e.outputs.String("exporterServiceAccount")
			rbs, err := e.cluster.Client.RbacV1().RoleBindings(e.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for _, rb := range rbs.Items {
				for _, s := range rb.Subjects {
					if s.Kind == "ServiceAccount" && s.Name == sa && rb.RoleRef.Kind == "Role" {
						if saved, err = e.cluster.Client.RbacV1().Roles(e.ns).Get(ctx, rb.RoleRef.Name, metav1.GetOptions{}); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			if saved == nil {
				b.Fatalf("no Role in %s is bound to the exporter's ServiceAccount %s", e.ns, sa)
			}
			if err := e.cluster.Client.RbacV1().Roles(e.ns).Delete(ctx, saved.Name, metav1.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
		},
		restore: func(ctx context.Context, b *testing.B) {
			r := saved.DeepCopy()
			r.ResourceVersion, r.UID, r.CreationTimestamp, r.ManagedFields = "", "", metav1.Time{}, nil
			if _, err := e.cluster.Client.RbacV1().Roles(e.ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		},
		settleIn: alertsQuiet}
}

// controllerDown kills a controller of the loop by the pid the cluster recorded and restarts it
// with its own command once its alert fired.
func (e *env) controllerDown(process, what, alert string, forDur time.Duration) alertFailure {
	return alertFailure{what: what, alert: alert, forDur: forDur,
		make: func(_ context.Context, b *testing.B) {
			if err := e.cluster.Kill(process); err != nil {
				b.Fatal(err)
			}
		},
		restore: func(_ context.Context, b *testing.B) {
			if err := e.cluster.Restart(process); err != nil {
				b.Fatal(err)
			}
		},
		settleIn: alertsQuiet}
}

// cappedUnderLoad holds more claims than the pool's maxReplicas and adds maxReplicas+1 more each
// minute: the HPA asks for its ceiling, the refilled pool serves maxReplicas of each minute's
// claims warm and the rest launch cold, all along (one claim a minute would find a warm sandbox
// in the refilled pool, and the cold launches of the first burst alone leave the rule's window
// before its for: is up). The claims go once the alert fired.
func (e *env) cappedUnderLoad(forDur time.Duration) alertFailure {
	var names []string
	stop := func() {}
	return alertFailure{what: "the pool capped under load (maxReplicas+1 claims a minute)", alert: monitoring.AlertPinnedAtMax, forDur: forDur,
		// Claims going cold at that rate are also what the cold-launch rule watches.
		also: []string{monitoring.AlertColdLaunches},
		make: func(ctx context.Context, b *testing.B) {
			hpa, err := e.cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Get(ctx, contract.KedaHPAPrefix+e.outputs.String("scaledObjectName"), metav1.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ceiling := int(hpa.Spec.MaxReplicas)
			for i := range ceiling + 2 {
				names = append(names, fmt.Sprintf("capped-%d", i))
				e.createClaim(ctx, b, names[len(names)-1])
			}
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			stop = func() { cancel(); <-done }
			go func() {
				defer close(done)
				t := time.NewTicker(time.Minute)
				defer t.Stop()
				for i := 0; ; i++ {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
					for j := range ceiling + 1 {
						n := fmt.Sprintf("capped-more-%d-%d", i, j)
						if err := framework.CreateClaim(ctx, e.cluster.Dynamic, e.ns, n, e.pool); err != nil {
							return // the context ended; a real failure shows as the alert not firing
						}
						names = append(names, n)
					}
				}
			}()
		},
		restore: func(ctx context.Context, b *testing.B) {
			stop()
			e.deleteClaims(ctx, b, names)
		},
		settleIn: 8 * time.Minute} // the rule reads cold launches over PinnedWindow (5m)
}

// alertsPrometheus is a Prometheus server beside the control plane, read through its HTTP API.
type alertsPrometheus struct {
	url string
}

// startAlertsPrometheus starts kube-state-metrics and Prometheus as local processes (stopped
// when the benchmark ends, by the pids they were started with) with the rule file spec renders
// and a scrape job per source the rules read.
func startAlertsPrometheus(b *testing.B, ctx context.Context, e *env, bins *toolcache.Binaries, spec monitoring.Spec) *alertsPrometheus {
	dir := filepath.Join(e.work, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	procs := process.NewSet(dir, false)
	b.Cleanup(func() {
		for _, err := range procs.Stop(10 * time.Second) {
			b.Errorf("stopping prometheus or kube-state-metrics: %v", err)
		}
	})
	ksm, ksmTelemetry := freeAddr(b), freeAddr(b)
	kh, kp, _ := net.SplitHostPort(ksm) // freeAddr's host:port
	_, tp, _ := net.SplitHostPort(ksmTelemetry)
	p, err := procs.Start("kube-state-metrics", bins.Path("kube-state-metrics"), []string{
		"--kubeconfig=" + e.cluster.Kubeconfig, "--host=" + kh, "--port=" + kp, "--telemetry-host=" + kh, "--telemetry-port=" + tp,
		"--resources=horizontalpodautoscalers,pods",
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := process.WaitHealthy(ctx, p, "http://"+ksm+"/healthz", nil, 2*time.Minute); err != nil {
		b.Fatal(err)
	}
	rules, err := monitoring.Rules(spec).YAML()
	if err != nil {
		b.Fatal(err)
	}
	rulesPath := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		b.Fatal(err)
	}
	metrics := e.cluster.MetricsAddrs()
	job := func(name, target, namespace string, honor bool) string {
		labels := ""
		if namespace != "" {
			labels = fmt.Sprintf("\n        labels: {namespace: %q}", namespace)
		}
		return fmt.Sprintf("  - job_name: %q\n    honor_labels: %t\n    static_configs:\n      - targets: [%q]%s\n", name, honor, target, labels)
	}
	config := fmt.Sprintf("global:\n  scrape_interval: %s\n  evaluation_interval: %s\nrule_files: [%q]\nscrape_configs:\n",
		alertsScrapeInterval, alertsEvalInterval, rulesPath) +
		job(spec.ExporterJob, e.exporter.Addr, spec.ExporterNamespace, false) +
		job(monitoring.KedaOperatorJob, metrics["keda-operator"], "keda", false) +
		job(monitoring.KedaMetricsServerJob, metrics["keda-adapter"], "keda", false) +
		job(monitoring.AgentSandboxJob, metrics["agent-sandbox-controller"], contract.AgentSandboxNamespace, false) +
		job("kube-state-metrics", ksm, "", true)
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("prometheus.yml:\n%s", config)
	addr := freeAddr(b)
	pp, err := procs.Start("prometheus", bins.Path("prometheus"), []string{
		"--config.file=" + configPath, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr,
	})
	if err != nil {
		b.Fatal(err)
	}
	url := "http://" + addr
	if err := process.WaitHealthy(ctx, pp, url+"/-/ready", nil, 2*time.Minute); err != nil {
		b.Fatal(err)
	}
	return &alertsPrometheus{url: url}
}

// promAlert is one alert as /api/v1/alerts gives it.
type promAlert struct {
	Name     string
	State    string
	ActiveAt time.Time
}

func (p *alertsPrometheus) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return json.Unmarshal(body, into)
}

// alerts are the alerts pending or firing now.
func (p *alertsPrometheus) alerts(ctx context.Context) ([]promAlert, error) {
	var r struct {
		Data struct {
			Alerts []struct {
				Labels   map[string]string `json:"labels"`
				State    string            `json:"state"`
				ActiveAt time.Time         `json:"activeAt"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/alerts", &r); err != nil {
		return nil, err
	}
	var out []promAlert
	for _, a := range r.Data.Alerts {
		out = append(out, promAlert{Name: a.Labels["alertname"], State: a.State, ActiveAt: a.ActiveAt})
	}
	return out, nil
}

// firing are the names of the alerts firing now.
func (p *alertsPrometheus) firing(ctx context.Context) ([]string, error) {
	alerts, err := p.alerts(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range alerts {
		if a.State == "firing" && !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// targetsDown are the scrape jobs with a target not up.
func (p *alertsPrometheus) targetsDown(ctx context.Context) ([]string, error) {
	var r struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/targets", &r); err != nil {
		return nil, err
	}
	var down []string
	for _, t := range r.Data.ActiveTargets {
		if t.Health != "up" {
			down = append(down, t.Labels["job"]+" ("+t.Health+": "+t.LastError+")")
		}
	}
	if len(r.Data.ActiveTargets) == 0 {
		down = append(down, "no target at all")
	}
	return down, nil
}
