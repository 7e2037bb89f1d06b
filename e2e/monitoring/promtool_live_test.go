// Package monitoring_test runs the real promtool (built by the control plane's tool cache, which
// the product's module does not require) on the alerting rules monitoring renders.
package monitoring_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring/monitoringtest"
)

// A promtool unit-test file (prometheus docs, "Unit testing for rules").
type promtoolTests struct {
	RuleFiles          []string       `json:"rule_files"`
	EvaluationInterval string         `json:"evaluation_interval"`
	Tests              []promtoolTest `json:"tests"`
}

type promtoolTest struct {
	Name           string      `json:"name"`
	Interval       string      `json:"interval"`
	InputSeries    []series    `json:"input_series"`
	AlertRuleTests []alertTest `json:"alert_rule_test"`
}

type series struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type alertTest struct {
	EvalTime  string     `json:"eval_time"`
	Alertname string     `json:"alertname"`
	ExpAlerts []expAlert `json:"exp_alerts"`
}

type expAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations"`
}

// testSpec is the rules' tests' shared spec (monitoringtest.TwoPools).
var testSpec = monitoringtest.TwoPools()

// values is a promtool series of samples one interval apart: missing ("_") before index from,
// then v(i) for each index i from from up to n-1.
func values(n, from int, v func(i int) int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = "_"
		if i >= from {
			out[i] = strconv.Itoa(v(i))
		}
	}
	return strings.Join(out, " ")
}

// promtoolCases are each alert firing and not firing, on the series the upstreams export.
func promtoolCases(rules monitoring.RuleFile) []promtoolTest {
	annotations := map[string]map[string]string{} // group/alert -> annotations
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			annotations[g.Name+"/"+r.Alert] = r.Annotations
		}
	}
	poolAlert := func(name, namespace, alert, severity string) expAlert {
		return expAlert{
			ExpLabels:      map[string]string{"severity": severity, "pool": name, "namespace": namespace},
			ExpAnnotations: annotations[monitoring.PoolGroupName(name)+"/"+alert],
		}
	}
	pool := func(alert, severity string) expAlert { return poolAlert("code", "agents-code", alert, severity) }
	// The browser pool's series are broken all along in some tests: its alert fires, on its own.
	browser := func(alert, severity string) expAlert { return poolAlert("browser", "agents-browser", alert, severity) }
	exporter := func(alert, severity string) expAlert {
		return expAlert{
			ExpLabels:      map[string]string{"severity": severity, "namespace": "agents"},
			ExpAnnotations: annotations[monitoring.ExporterGroupName+"/"+alert],
		}
	}
	const (
		errs   = `keda_scaler_detail_errors_total{exported_namespace="agents-code",namespace="keda",scaledObject="code",scaler="metrics-api",triggerIndex="0",metric="s0-metric-api-active_claims",type="scaledobject"}`
		ok     = `keda_scaler_http_requests_total{exported_namespace="agents-code",namespace="keda",scaled_resource="code",scaler="metrics-api",trigger_name="",metric_name="s0-metric-api-active_claims",status_code="200"}`
		failed = `keda_scaler_http_requests_total{exported_namespace="agents-code",namespace="keda",scaled_resource="code",scaler="metrics-api",trigger_name="",metric_name="s0-metric-api-active_claims",status_code="error"}`
		// The other pool's ScaledObject failing all along: never the code pool's alert.
		otherErrs   = `keda_scaler_detail_errors_total{exported_namespace="agents-browser",namespace="keda",scaledObject="browser",scaler="metrics-api",triggerIndex="0",metric="s0-metric-api-active_claims",type="scaledobject"}`
		otherFailed = `keda_scaler_http_requests_total{exported_namespace="agents-browser",namespace="keda",scaled_resource="browser",scaler="metrics-api",trigger_name="",metric_name="s0-metric-api-active_claims",status_code="error"}`

		warm      = `agent_sandbox_claim_creation_total{exported_namespace="agents-code",namespace="agent-sandbox-system",sandbox_template="code-agent",launch_type="warm",warmpool_name="code",pod_condition="ready",created_by="go-client"}`
		cold      = `agent_sandbox_claim_creation_total{exported_namespace="agents-code",namespace="agent-sandbox-system",sandbox_template="code-agent",launch_type="cold",warmpool_name="code",pod_condition="not_ready",created_by="go-client"}`
		otherCold = `agent_sandbox_claim_creation_total{exported_namespace="agents-browser",namespace="agent-sandbox-system",sandbox_template="browser-agent",launch_type="cold",warmpool_name="browser",pod_condition="not_ready",created_by="go-client"}`

		upA      = `up{job="claim-exporter",namespace="agents",instance="198.18.0.10:8080",pod="claim-exporter-a"}`
		upB      = `up{job="claim-exporter",namespace="agents",instance="198.18.0.11:8080",pod="claim-exporter-b"}`
		otherUp  = `up{job="claim-exporter",namespace="someone-else",instance="198.18.0.12:8080",pod="claim-exporter-c"}`
		refusedA = `warmpool_exporter_refused_pools{job="claim-exporter",namespace="agents",instance="198.18.0.10:8080",pod="claim-exporter-a"}`
		refusedB = `warmpool_exporter_refused_pools{job="claim-exporter",namespace="agents",instance="198.18.0.11:8080",pod="claim-exporter-b"}`

		// As scraped without honorLabels: the exporter's job and namespace, the pool's namespace as exported_namespace.
		freshA     = `warmpool_active_claims_fresh{job="claim-exporter",namespace="agents",exported_namespace="agents-code",pool="code",instance="198.18.0.10:8080",pod="claim-exporter-a"}`
		freshB     = `warmpool_active_claims_fresh{job="claim-exporter",namespace="agents",exported_namespace="agents-code",pool="code",instance="198.18.0.11:8080",pod="claim-exporter-b"}`
		otherFresh = `warmpool_active_claims_fresh{job="claim-exporter",namespace="agents",exported_namespace="agents-browser",pool="browser",instance="198.18.0.10:8080",pod="claim-exporter-a"}`
		elsewhere  = `warmpool_active_claims_fresh{job="claim-exporter",namespace="someone-else",exported_namespace="agents-code",pool="code",instance="198.18.0.12:8080",pod="claim-exporter-c"}`
	)
	const (
		// kube-state-metrics, scraped with honorLabels: the HPA's own namespace.
		desired      = `kube_horizontalpodautoscaler_status_desired_replicas{job="kube-state-metrics",namespace="agents-code",horizontalpodautoscaler="keda-hpa-code"}`
		maxReplicas  = `kube_horizontalpodautoscaler_spec_max_replicas{job="kube-state-metrics",namespace="agents-code",horizontalpodautoscaler="keda-hpa-code"}`
		otherDesired = `kube_horizontalpodautoscaler_status_desired_replicas{job="kube-state-metrics",namespace="agents-browser",horizontalpodautoscaler="keda-hpa-browser"}`
		otherMax     = `kube_horizontalpodautoscaler_spec_max_replicas{job="kube-state-metrics",namespace="agents-browser",horizontalpodautoscaler="keda-hpa-browser"}`

		kedaOperatorA = `up{job="keda-operator",namespace="keda",instance="198.18.0.20:8080",pod="keda-operator-a"}`
		kedaOperatorB = `up{job="keda-operator",namespace="keda",instance="198.18.0.21:8080",pod="keda-operator-b"}`
		kedaMetrics   = `up{job="keda-operator-metrics-apiserver",namespace="keda",instance="198.18.0.22:8080",pod="keda-operator-metrics-apiserver-a"}`
		agentSandbox  = `up{job="agent-sandbox-controller",namespace="agent-sandbox-system",instance="198.18.0.23:8080",pod="agent-sandbox-controller-a"}`
		// Another install's operator in another namespace, up all along: never ours.
		otherOperator = `up{job="keda-operator",namespace="keda-staging",instance="198.18.0.24:8080",pod="keda-operator-c"}`
	)
	// unschedulable is pod k of a namespace: created at index from (Unix seconds from promtool's
	// start, one interval apart), unschedulable for the first waiting samples, then scheduled.
	unschedulable := func(ns, pod string, n, from, waiting int, interval time.Duration) []series {
		labels := fmt.Sprintf(`{job="kube-state-metrics",namespace=%q,pod=%q,uid="uid-%s"}`, ns, pod, pod)
		return []series{
			{"kube_pod_status_unschedulable" + labels, values(n, from, func(i int) int {
				if waiting < 0 || i < from+waiting {
					return 1
				}
				return 0
			})},
			{"kube_pod_created" + labels, values(n, from, func(int) int { return from * int(interval/time.Second) })},
		}
	}
	// churn: a new pod every minute, each unschedulable for 90 s (a node launch) and then
	// scheduled: some pod is always waiting, none for long.
	var churn []series
	for k := 0; k < 20; k++ {
		churn = append(churn, unschedulable("agents-code", fmt.Sprintf("code-%d", k), 60, 2*k, 3, 30*time.Second)...)
	}
	stuck := append(unschedulable("agents-code", "code-stuck", 60, 2, -1, 30*time.Second), churn...)
	controller := func(alert, namespace string) expAlert {
		return expAlert{
			ExpLabels:      map[string]string{"severity": "critical", "namespace": namespace},
			ExpAnnotations: annotations[monitoring.ControllersGroupName+"/"+alert],
		}
	}
	none := []expAlert{}
	frozen, otherFrozen := pool(monitoring.AlertPoolFrozen, "critical"), browser(monitoring.AlertPoolFrozen, "critical")
	return []promtoolTest{
		{
			// Scrapes every 30 s (index i is i*30 s). Healthy for 10 min: 8 good reads a minute
			// (the scale loop and the HPA, 15 s each). Then the exporter goes: three errors and
			// KEDA's fallback takes over, after which KEDA counts no more errors (see rules.go)
			// while its requests keep failing.
			Name: "frozen: an outage the fallback holds", Interval: "30s",
			InputSeries: []series{
				{errs, "0x20 1 2 3 3x60"},
				{ok, "0+4x20 80x63"},
				{failed, "_x21 4+4x62"},
				{otherErrs, "0+1x83"},
				{otherFailed, "0+4x83"},
			},
			AlertRuleTests: []alertTest{
				{"9m", monitoring.AlertPoolFrozen, []expAlert{otherFrozen}},  // code is healthy
				{"12m", monitoring.AlertPoolFrozen, []expAlert{otherFrozen}}, // code broken, not for 2 min yet
				{"15m", monitoring.AlertPoolFrozen, []expAlert{frozen, otherFrozen}},
				// 20 min after the last error counted: only the failed requests still show it.
				{"35m", monitoring.AlertPoolFrozen, []expAlert{frozen, otherFrozen}},
			},
		},
		{
			// One failed read among healthy ones (a rollout's blip): the fallback never comes near.
			Name: "frozen: a blip is not", Interval: "30s",
			InputSeries: []series{
				{errs, "0x20 1x40"},
				{ok, "0+4x20 84+4x40"},
				{failed, "_x20 1x40"},
			},
			AlertRuleTests: []alertTest{
				{"11m", monitoring.AlertPoolFrozen, none},
				{"14m", monitoring.AlertPoolFrozen, none},
				{"25m", monitoring.AlertPoolFrozen, none},
			},
		},
		{
			// One claim a minute warm and one cold: half the claims waited.
			Name: "cold launches: half the claims", Interval: "1m",
			InputSeries: []series{{warm, "0+1x60"}, {cold, "0+1x60"}},
			AlertRuleTests: []alertTest{
				{"40m", monitoring.AlertColdLaunches, []expAlert{pool(monitoring.AlertColdLaunches, "warning")}},
			},
		},
		{
			// 10% cold is below the 25% threshold; the other pool's claims, all cold, are its own.
			Name: "cold launches: a tenth, and another pool's", Interval: "1m",
			InputSeries: []series{{warm, "0+9x60"}, {cold, "0+1x60"}, {otherCold, "0+5x60"}},
			AlertRuleTests: []alertTest{
				{"40m", monitoring.AlertColdLaunches, []expAlert{browser(monitoring.AlertColdLaunches, "warning")}},
			},
		},
		{
			// Half cold, but 6 claims in 30 min: too few to judge (ColdMinClaims 20).
			Name: "cold launches: too few claims", Interval: "10m",
			InputSeries: []series{{warm, "0+1x6"}, {cold, "0+1x6"}},
			AlertRuleTests: []alertTest{
				{"60m", monitoring.AlertColdLaunches, none},
			},
		},
		{
			Name: "exporter down: both replicas", Interval: "30s",
			InputSeries: []series{{upA, "1x20 0x20"}, {upB, "1x20 0x20"}, {otherUp, "1x40"}},
			AlertRuleTests: []alertTest{
				{"9m", monitoring.AlertExporterDown, none},
				{"11m", monitoring.AlertExporterDown, none}, // down, not for 2 min yet
				{"14m", monitoring.AlertExporterDown, []expAlert{exporter(monitoring.AlertExporterDown, "critical")}},
			},
		},
		{
			Name: "exporter down: one replica of two is not", Interval: "30s",
			InputSeries: []series{{upA, "1x40"}, {upB, "1x20 0x20"}},
			AlertRuleTests: []alertTest{
				{"15m", monitoring.AlertExporterDown, none},
			},
		},
		{
			// The targets vanish (the Service lost its endpoints): no up series at all.
			Name: "exporter down: no target left", Interval: "30s",
			InputSeries: []series{{upA, "1x20"}, {upB, "1x20"}, {otherUp, "1x60"}},
			AlertRuleTests: []alertTest{
				{"12m", monitoring.AlertExporterDown, none}, // the last samples are still within the lookback
				{"25m", monitoring.AlertExporterDown, []expAlert{exporter(monitoring.AlertExporterDown, "critical")}},
			},
		},
		{
			// Both replicas lose their reads at 10 min (a Role deleted) and serve the last count;
			// the browser pool's reads stay good. Another stack's exporter, stale all along, is not ours.
			Name: "stale count: the reads fail", Interval: "30s",
			InputSeries: []series{{freshA, "1x20 0x20"}, {freshB, "1x20 0x20"}, {otherFresh, "1x40"}, {elsewhere, "0x40"}},
			AlertRuleTests: []alertTest{
				{"9m", monitoring.AlertCountStale, none},
				{"11m", monitoring.AlertCountStale, none}, // stale, not for 2 min yet
				{"14m", monitoring.AlertCountStale, []expAlert{pool(monitoring.AlertCountStale, "critical")}},
			},
		},
		{
			// One replica of two stale: KEDA gets the old count on its share of reads.
			Name: "stale count: one replica", Interval: "30s",
			InputSeries: []series{{freshA, "1x40"}, {freshB, "1x20 0x20"}},
			AlertRuleTests: []alertTest{
				{"15m", monitoring.AlertCountStale, []expAlert{pool(monitoring.AlertCountStale, "critical")}},
			},
		},
		{
			// One failed read that the next one mends (a blip) is not stale.
			Name: "stale count: a blip is not", Interval: "30s",
			InputSeries: []series{{freshA, "1x20 0 1x20"}, {freshB, "1x41"}},
			AlertRuleTests: []alertTest{
				{"11m", monitoring.AlertCountStale, none},
				{"15m", monitoring.AlertCountStale, none},
			},
		},
		{
			// KEDA scraped for 10 min, then not (its ServiceMonitor gone): the code pool's requests
			// vanish; the browser pool's series never existed (a ScaledObject KEDA never polled).
			Name: "KEDA unseen: its series vanish", Interval: "30s",
			InputSeries: []series{{ok, "0+4x20"}},
			AlertRuleTests: []alertTest{
				{"5m", monitoring.AlertKedaUnseen, none}, // browser: absent, but not for 10 min yet
				{"12m", monitoring.AlertKedaUnseen, []expAlert{browser(monitoring.AlertKedaUnseen, "warning")}},
				// code's last sample at 10 min, stale after 5 more; absent 10 min after that.
				{"24m", monitoring.AlertKedaUnseen, []expAlert{browser(monitoring.AlertKedaUnseen, "warning")}},
				{"31m", monitoring.AlertKedaUnseen, []expAlert{pool(monitoring.AlertKedaUnseen, "warning"), browser(monitoring.AlertKedaUnseen, "warning")}},
			},
		},
		{
			// Both pools' requests scraped all along (failing ones count too): quiet.
			Name: "KEDA unseen: seen", Interval: "30s",
			InputSeries: []series{{ok, "0+4x60"}, {otherFailed, "0+4x60"}},
			AlertRuleTests: []alertTest{
				{"25m", monitoring.AlertKedaUnseen, none},
			},
		},
		{
			// From 10 min the code pool's HPA asks for its maxReplicas and claims go cold; the
			// browser pool is below its ceiling, with cold claims of its own: not pinned.
			Name: "pinned at max: claims go cold", Interval: "30s",
			InputSeries: []series{
				{desired, "4x20 10x40"}, {maxReplicas, "10x60"}, {warm, "0+2x60"}, {cold, "0x20 0+1x40"},
				{otherDesired, "3x60"}, {otherMax, "10x60"}, {otherCold, "0+1x60"},
			},
			AlertRuleTests: []alertTest{
				{"9m", monitoring.AlertPinnedAtMax, none},
				{"13m", monitoring.AlertPinnedAtMax, none}, // not for 5 min yet
				{"17m", monitoring.AlertPinnedAtMax, []expAlert{pool(monitoring.AlertPinnedAtMax, "warning")}},
			},
		},
		{
			// At the ceiling for 20 minutes, every claim warm: the ceiling is doing its job.
			Name: "pinned at max: every claim warm", Interval: "30s",
			InputSeries: []series{{desired, "4x20 10x40"}, {maxReplicas, "10x60"}, {warm, "0+2x60"}, {cold, "0x60"}},
			AlertRuleTests: []alertTest{
				{"25m", monitoring.AlertPinnedAtMax, none},
			},
		},
		{
			// The code pool's HPA series stop at 10 min (kube-state-metrics unscraped); the
			// browser pool's were never there.
			Name: "HPA unseen: its series vanish", Interval: "30s",
			InputSeries: []series{{maxReplicas, "10x20"}},
			AlertRuleTests: []alertTest{
				{"5m", monitoring.AlertHPAUnseen, none}, // browser: absent, but not for 10 min yet
				{"12m", monitoring.AlertHPAUnseen, []expAlert{browser(monitoring.AlertHPAUnseen, "warning")}},
				{"31m", monitoring.AlertHPAUnseen, []expAlert{pool(monitoring.AlertHPAUnseen, "warning"), browser(monitoring.AlertHPAUnseen, "warning")}},
			},
		},
		{
			// A pod created at 1 min never gets a node, among pods that each wait 90 s.
			Name: "unschedulable: a pod no node takes", Interval: "30s",
			InputSeries: stuck,
			AlertRuleTests: []alertTest{
				{"5m", monitoring.AlertUnschedulable, none},
				{"6m30s", monitoring.AlertUnschedulable, none}, // 5 min old at 6 min: not for 1 min yet
				{"8m", monitoring.AlertUnschedulable, []expAlert{pool(monitoring.AlertUnschedulable, "critical")}},
			},
		},
		{
			Name: "unschedulable: every pod waits for a node launch, none for long", Interval: "30s",
			InputSeries: churn,
			AlertRuleTests: []alertTest{
				{"10m", monitoring.AlertUnschedulable, none},
				{"20m", monitoring.AlertUnschedulable, none},
			},
		},
		{
			// Both of KEDA's operator replicas and agent-sandbox's controller fail their scrapes
			// from 10 min; KEDA's metrics server restarts (one minute down); another install's
			// operator is up all along.
			Name: "controllers: KEDA's operator and agent-sandbox's down", Interval: "30s",
			InputSeries: []series{{kedaOperatorA, "1x20 0x20"}, {kedaOperatorB, "1x20 0x20"}, {kedaMetrics, "1x19 0x2 1x18"}, {agentSandbox, "1x20 0x20"}, {otherOperator, "1x40"}},
			AlertRuleTests: []alertTest{
				{"11m", monitoring.AlertKedaOperatorDown, none}, // not for 2 min yet
				{"11m", monitoring.AlertKedaMetricsDown, none},  // a restart
				{"14m", monitoring.AlertKedaOperatorDown, []expAlert{controller(monitoring.AlertKedaOperatorDown, "keda")}},
				{"14m", monitoring.AlertKedaMetricsDown, none},
				{"14m", monitoring.AlertAgentSandboxDown, []expAlert{controller(monitoring.AlertAgentSandboxDown, "agent-sandbox-system")}},
			},
		},
		{
			// One operator replica of two down (the standby, or a drain): quiet. The metrics
			// server's and agent-sandbox's targets vanish at 5 min: theirs fire.
			Name: "controllers: one replica of two is not; vanished targets are", Interval: "30s",
			InputSeries: []series{{kedaOperatorA, "1x40"}, {kedaOperatorB, "1x10 0x30"}, {kedaMetrics, "1x10"}, {agentSandbox, "1x10"}},
			AlertRuleTests: []alertTest{
				{"15m", monitoring.AlertKedaOperatorDown, none},
				{"15m", monitoring.AlertKedaMetricsDown, []expAlert{controller(monitoring.AlertKedaMetricsDown, "keda")}},
				{"15m", monitoring.AlertAgentSandboxDown, []expAlert{controller(monitoring.AlertAgentSandboxDown, "agent-sandbox-system")}},
			},
		},
		{
			Name: "exporter refusing an entry", Interval: "1m",
			InputSeries: []series{{refusedA, "0x10 1x20"}, {refusedB, "0x30"}},
			AlertRuleTests: []alertTest{
				{"10m", monitoring.AlertExporterRefusing, none},
				{"13m", monitoring.AlertExporterRefusing, none}, // not for 5 min yet
				{"20m", monitoring.AlertExporterRefusing, []expAlert{exporter(monitoring.AlertExporterRefusing, "warning")}},
			},
		},
	}
}

// runPromtool writes the rules and the tests to a directory of the test's and runs
// `promtool test rules`, returning its exit error and output.
func runPromtool(t *testing.T, promtool string, rules monitoring.RuleFile) (string, error) {
	t.Helper()
	dir := t.TempDir()
	rulesYAML, err := rules.YAML()
	if err != nil {
		t.Fatal(err)
	}
	testsYAML, err := yaml.Marshal(promtoolTests{RuleFiles: []string{"rules.yaml"}, EvaluationInterval: "1m", Tests: promtoolCases(rules)})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"rules.yaml": rulesYAML, "tests.yaml": testsYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "test", "rules", "tests.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func ensurePromtool(t *testing.T) string {
	t.Helper()
	start := time.Now()
	bins, err := toolcache.Ensure(context.Background(), os.Stderr, toolcache.Monitoring...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("promtool ready after %s", time.Since(start).Round(time.Second))
	return bins.Path("promtool")
}

// TestLivePromtoolRulesFireAndStayQuiet runs the real promtool on the rules the program renders:
// each alert fires where it must and stays quiet where it must not.
func TestLivePromtoolRulesFireAndStayQuiet(t *testing.T) {
	promtool := ensurePromtool(t)
	out, err := runPromtool(t, promtool, monitoring.Rules(testSpec))
	t.Logf("promtool test rules:\n%s", out)
	if err != nil {
		t.Fatalf("promtool test rules failed: %v", err)
	}
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool did not report SUCCESS")
	}
}

// TestLivePromtoolRejectsBrokenRules shows the tests can fail: rules missing what each case
// depends on are refused by promtool, naming the alert.
func TestLivePromtoolRejectsBrokenRules(t *testing.T) {
	promtool := ensurePromtool(t)
	for name, c := range map[string]struct {
		breakIt func(*monitoring.Rule)
		failsAt string // the evaluation promtool must then report as wrong
	}{
		// Without the failed requests' branch, the frozen pool goes quiet once the fallback holds it.
		monitoring.AlertPoolFrozen: {func(r *monitoring.Rule) { r.Expr, _, _ = strings.Cut(r.Expr, "\nor\n") }, "time: 35m"},
		// Without the minimum, six claims are enough to fire.
		monitoring.AlertColdLaunches: {func(r *monitoring.Rule) { r.Expr, _, _ = strings.Cut(r.Expr, "\nand\n") }, "time: 1h"},
		// Counting any target up, the other stack's exporter hides ours.
		monitoring.AlertExporterDown: {func(r *monitoring.Rule) { r.Expr = `absent(up{job="claim-exporter"} == 1)` }, "time: 14m"},
		// Without for:, a refusal fires at once.
		monitoring.AlertExporterRefusing: {func(r *monitoring.Rule) { r.For = "" }, "time: 13m"},
		// Without for:, a pool KEDA has not polled yet, or a Prometheus restart's gap, fires at once.
		monitoring.AlertKedaUnseen: {func(r *monitoring.Rule) { r.For = "" }, "time: 5m"},
		// Without the cold claims, a ceiling that serves every claim warm pages.
		monitoring.AlertPinnedAtMax: {func(r *monitoring.Rule) { r.Expr, _, _ = strings.Cut(r.Expr, "\nand\n") }, "time: 25m"},
		// Without for:, a pool whose HPA KEDA has not made yet, or a restart's gap, fires at once.
		monitoring.AlertHPAUnseen: {func(r *monitoring.Rule) { r.For = "" }, "time: 5m"},
		// Judged on the condition alone, steady node launches page.
		monitoring.AlertUnschedulable: {func(r *monitoring.Rule) {
			condition, _, _ := strings.Cut(r.Expr, "\nand on")
			r.Expr, r.For = condition+") > 0", "5m"
		}, "time: 10m"},
		// Counting any namespace's operator, another install hides ours.
		monitoring.AlertKedaOperatorDown: {func(r *monitoring.Rule) { r.Expr = `absent(up{job="keda-operator"} == 1)` }, "time: 14m"},
		// Without for:, a restart's minute pages.
		monitoring.AlertKedaMetricsDown: {func(r *monitoring.Rule) { r.For = "" }, "time: 11m"},
		// Asking only whether a target exists, a controller that fails its scrapes is up.
		monitoring.AlertAgentSandboxDown: {func(r *monitoring.Rule) { r.Expr = strings.Replace(r.Expr, " == 1)", ")", 1) }, "time: 14m"},
		// Read as the freshest replica, one stale replica of two hides.
		monitoring.AlertCountStale: {func(r *monitoring.Rule) { r.Expr = strings.Replace(r.Expr, "min(", "max(", 1) }, "time: 15m"},
	} {
		t.Run(name, func(t *testing.T) {
			rules := monitoring.Rules(testSpec)
			broken := 0
			for gi := range rules.Groups {
				for ri := range rules.Groups[gi].Rules {
					if r := &rules.Groups[gi].Rules[ri]; r.Alert == name {
						c.breakIt(r)
						broken++
					}
				}
			}
			if broken == 0 {
				t.Fatalf("no rule %s to break", name)
			}
			out, err := runPromtool(t, promtool, rules)
			if err == nil {
				t.Fatalf("promtool passed rules with %s broken:\n%s", name, out)
			}
			t.Logf("failing evaluations: %q", regexp.MustCompile(`alertname: [A-Za-z]+, time: [0-9hms]+`).FindAllString(out, -1))
			if !strings.Contains(out, "alertname: "+name+", "+c.failsAt) {
				t.Errorf("promtool failed, but not on %s at %s:\n%s", name, c.failsAt, out)
			}
		})
	}
}
