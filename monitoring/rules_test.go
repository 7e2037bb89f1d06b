package monitoring_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/warmpool/warm-pool-autoscaling-keda/monitoring"
)

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
	assert.Equal(t, []string{"warmpool.pool.code", "warmpool.pool.browser", "warmpool.exporter"}, names)

	for i, p := range spec.Pools {
		g := back.Groups[i]
		require.Len(t, g.Rules, 4)
		frozen, cold, stale, unseen := g.Rules[0], g.Rules[1], g.Rules[2], g.Rules[3]
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
	exp := back.Groups[len(back.Groups)-1]
	require.Len(t, exp.Rules, 2)
	assert.Equal(t, `absent(up{job="claim-exporter",namespace="agents"} == 1)`, exp.Rules[0].Expr)
	assert.Equal(t, "2m", exp.Rules[0].For)
	assert.Equal(t, `max(warmpool_exporter_refused_pools{job="claim-exporter",namespace="agents"}) > 0`, exp.Rules[1].Expr)
	assert.Equal(t, "5m", exp.Rules[1].For)
}

// With honorLabels scrapes the upstreams' namespace is `namespace`; the rules on KEDA's and
// agent-sandbox's series follow the setting. The stale-count rule reads the exporter's own series,
// which the program's ServiceMonitor scrapes: it selects the exporter's job and namespace either way.
func TestRulesFollowTheNamespaceLabel(t *testing.T) {
	spec := testSpec
	spec.NamespaceLabel = "namespace"
	before := monitoring.Rules(testSpec)
	for gi, g := range monitoring.Rules(spec).Groups[:2] {
		for ri, r := range g.Rules {
			if r.Alert == monitoring.AlertCountStale {
				assert.Equal(t, before.Groups[gi].Rules[ri].Expr, r.Expr)
				continue
			}
			assert.NotContains(t, r.Expr, "exported_namespace")
			assert.Contains(t, r.Expr, `{namespace="agents-`)
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
