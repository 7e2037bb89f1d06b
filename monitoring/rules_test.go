package monitoring_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring/monitoringtest"
)

// testSpec is the rules' tests' shared spec (monitoringtest.TwoPools).
var testSpec = monitoringtest.TwoPools()

// The rendered file parses back as a rule file, with a group per pool and one for the exporter,
// each rule selecting its own pool's series by the configured label and carrying its thresholds.
func TestRuleFileParsesAndHoldsEachPoolsRules(t *testing.T) {
	spec := testSpec
	spec.Thresholds.FrozenFor = "3m"
	spec.Thresholds.ReadFailureRatio = 0.75
	spec.Thresholds.ColdRatio = 0.2
	spec.Thresholds.ColdWindow = "1h"
	spec.Thresholds.ColdMinClaims = 50
	b, err := monitoring.Rules(spec).YAML()
	require.NoError(t, err)

	var back monitoring.RuleFile
	require.NoError(t, yaml.UnmarshalStrict(b, &back))
	var generic map[string]any
	require.NoError(t, yaml.Unmarshal(b, &generic))
	require.Contains(t, generic, "groups")

	names := []string{}
	for _, g := range back.Groups {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"warmpool.pool.code", "warmpool.pool.browser", "warmpool.exporter", "warmpool.controllers"}, names)

	for i, p := range spec.Pools {
		g := back.Groups[i]
		require.Len(t, g.Rules, 7)
		frozen, cold, stale, unseen := g.Rules[0], g.Rules[1], g.Rules[2], g.Rules[3]
		pinned, hpaUnseen, unschedulable := g.Rules[4], g.Rules[5], g.Rules[6]
		hpa := `{horizontalpodautoscaler="` + p.HPA + `",namespace="` + p.Namespace + `"}`
		assert.Equal(t, monitoring.AlertPinnedAtMax, pinned.Alert)
		assert.Equal(t, "(max(kube_horizontalpodautoscaler_status_desired_replicas"+hpa+") >= max(kube_horizontalpodautoscaler_spec_max_replicas"+hpa+"))\nand\n"+
			`(sum(increase(agent_sandbox_claim_creation_total{exported_namespace="`+p.Namespace+`",launch_type="cold",warmpool_name="`+p.Name+`"}[5m])) > 0)`, pinned.Expr)
		assert.Equal(t, "5m", pinned.For)
		assert.Equal(t, monitoring.AlertHPAUnseen, hpaUnseen.Alert)
		assert.Equal(t, "absent(sum(kube_horizontalpodautoscaler_spec_max_replicas"+hpa+"))", hpaUnseen.Expr)
		assert.Equal(t, monitoring.AlertUnschedulable, unschedulable.Alert)
		assert.Equal(t, `count((kube_pod_status_unschedulable{namespace="`+p.Namespace+`"} == 1)`+"\nand on(namespace, pod)\n"+
			`(time() - kube_pod_created{namespace="`+p.Namespace+`"} > 300)) > 0`, unschedulable.Expr)
		assert.Equal(t, "1m", unschedulable.For)
		assert.Equal(t, monitoring.AlertKedaUnseen, unseen.Alert)
		assert.Equal(t, `absent(sum(keda_scaler_http_requests_total{exported_namespace="`+p.Namespace+`",scaled_resource="`+p.ScaledObject+`"}))`, unseen.Expr)
		assert.Equal(t, "10m", unseen.For)
		assert.Equal(t, monitoring.AlertCountStale, stale.Alert)
		assert.Equal(t, "3m", stale.For, "frozenFor")
		assert.Equal(t, `min(warmpool_active_claims_fresh{job="claim-exporter",namespace="agents",pool="`+p.Name+`"}) == 0`, stale.Expr)
		assert.Equal(t, map[string]string{"severity": "critical", "pool": p.Name, "namespace": p.Namespace}, stale.Labels)
		assert.Equal(t, monitoring.AlertPoolFrozen, frozen.Alert)
		assert.Equal(t, "3m", frozen.For)
		assert.Contains(t, frozen.Expr, `keda_scaler_detail_errors_total{exported_namespace="`+p.Namespace+`",scaledObject="`+p.ScaledObject+`"}[5m])) >= 3`)
		assert.Contains(t, frozen.Expr, `keda_scaler_http_requests_total{exported_namespace="`+p.Namespace+`",scaled_resource="`+p.ScaledObject+`",status_code!~"2.."}[5m]`)
		assert.Contains(t, frozen.Expr, ">= 0.75")
		assert.Equal(t, map[string]string{"severity": "critical", "pool": p.Name, "namespace": p.Namespace}, frozen.Labels)

		assert.Equal(t, monitoring.AlertColdLaunches, cold.Alert)
		assert.Equal(t, "5m", cold.For)
		assert.Contains(t, cold.Expr, `agent_sandbox_claim_creation_total{exported_namespace="`+p.Namespace+`",warmpool_name="`+p.Name+`",launch_type="cold"}[1h]`)
		assert.Contains(t, cold.Expr, "> 0.2")
		assert.Contains(t, cold.Expr, ">= 50")
		for _, r := range g.Rules {
			assert.NotEmpty(t, r.Annotations["summary"])
			assert.NotEmpty(t, r.Annotations["description"])
		}
	}
	controllers := back.Groups[len(back.Groups)-1]
	require.Len(t, controllers.Rules, 3)
	for i, want := range []struct{ alert, expr string }{
		{monitoring.AlertKedaOperatorDown, `absent(up{job="keda-operator",namespace="keda"} == 1)`},
		{monitoring.AlertKedaMetricsDown, `absent(up{job="keda-operator-metrics-apiserver",namespace="keda"} == 1)`},
		{monitoring.AlertAgentSandboxDown, `absent(up{job="agent-sandbox-controller",namespace="agent-sandbox-system"} == 1)`},
	} {
		assert.Equal(t, want.alert, controllers.Rules[i].Alert)
		assert.Equal(t, want.expr, controllers.Rules[i].Expr)
		assert.Equal(t, "2m", controllers.Rules[i].For)
	}
	exp := back.Groups[len(back.Groups)-2]
	require.Len(t, exp.Rules, 2)
	assert.Equal(t, `absent(up{job="claim-exporter",namespace="agents"} == 1)`, exp.Rules[0].Expr)
	assert.Equal(t, "2m", exp.Rules[0].For)
	assert.Equal(t, `max(warmpool_exporter_refused_pools{job="claim-exporter",namespace="agents"}) > 0`, exp.Rules[1].Expr)
	assert.Equal(t, "5m", exp.Rules[1].For)
}

// With honorLabels scrapes the upstreams' namespace is `namespace`; the rules on KEDA's and
// agent-sandbox's series follow the setting. The stale-count rule reads the exporter's own series,
// which the program's ServiceMonitor scrapes, and the HPA and pod rules kube-state-metrics', which
// kube-prometheus-stack scrapes with honorLabels: they select the same labels either way.
func TestRulesFollowTheNamespaceLabel(t *testing.T) {
	spec := testSpec
	spec.NamespaceLabel = "namespace"
	before := monitoring.Rules(testSpec)
	for gi, g := range monitoring.Rules(spec).Groups[:2] {
		for ri, r := range g.Rules {
			switch r.Alert {
			case monitoring.AlertCountStale, monitoring.AlertHPAUnseen, monitoring.AlertUnschedulable:
				assert.Equal(t, before.Groups[gi].Rules[ri].Expr, r.Expr)
				continue
			}
			assert.NotContains(t, r.Expr, "exported_namespace")
			assert.Regexp(t, `[{,]namespace="agents-`, r.Expr)
		}
	}
}

// Label values are quoted as PromQL strings: a quote in a name cannot end the matcher.
func TestSelectorsQuoteTheirValues(t *testing.T) {
	spec := testSpec
	spec.Pools = []monitoring.Pool{{Name: `a"b`, Namespace: "ns", ScaledObject: "so"}}
	r := monitoring.Rules(spec).Groups[0].Rules[1]
	assert.Contains(t, r.Expr, `warmpool_name="a\"b"`)
	assert.False(t, strings.Contains(r.Expr, `="a"b"`))
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"90s": 90 * time.Second, "5m": 5 * time.Minute, "1h": time.Hour} {
		got, ok := monitoring.ParseDuration(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0m", "5", "1m30s", "1.5m", "-1m", "5d", "05m", " 5m"} {
		_, ok := monitoring.ParseDuration(in)
		assert.False(t, ok, in)
	}
}

// Only the controllers the stack installs are watched for being down: an adopted install's jobs
// are the adopter's (its Unseen rules still say when its metrics are missing).
func TestControllersWatchedAreTheInstalledOnes(t *testing.T) {
	spec := testSpec
	spec.Controllers = monitoring.InstalledControllers(false, false)
	for _, g := range monitoring.Rules(spec).Groups {
		assert.NotEqual(t, monitoring.ControllersGroupName, g.Name)
	}
	spec.Controllers = monitoring.InstalledControllers(false, true)
	groups := monitoring.Rules(spec).Groups
	last := groups[len(groups)-1]
	require.Equal(t, monitoring.ControllersGroupName, last.Name)
	require.Len(t, last.Rules, 1)
	assert.Equal(t, monitoring.AlertAgentSandboxDown, last.Rules[0].Alert)
}

// Every alert links to its own section of the runbook, under the stack's runbook address.
func TestEveryAlertLinksToItsRunbookSection(t *testing.T) {
	for _, base := range []string{"", "https://git.example.com/platform/warm-pool/blob/main/docs/runbook.md"} {
		spec := testSpec
		spec.RunbookURL = base
		if base == "" {
			base = monitoring.DefaultRunbookURL
		}
		for _, g := range monitoring.Rules(spec).Groups {
			for _, r := range g.Rules {
				assert.Equal(t, base+"#"+strings.ToLower(r.Alert), r.Annotations["runbook_url"], r.Alert)
			}
		}
	}
}

// The runbook has a section for every alert the rules can render, headed by the alert's name,
// so each runbook_url lands on it.
func TestTheRunbookHasASectionPerAlert(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", monitoring.DefaultRunbookURL))
	require.NoError(t, err)
	headings := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[strings.TrimSpace(h)] = true
		}
	}
	alerts := map[string]bool{}
	for _, g := range monitoring.Rules(testSpec).Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
		}
	}
	require.Len(t, alerts, 12, "testSpec renders every alert")
	for a := range alerts {
		assert.True(t, headings[a], "docs/runbook.md has no section \"## %s\"", a)
	}
}
