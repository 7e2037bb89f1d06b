package program

import (
	"encoding/json"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
)

const (
	typeServiceMonitor = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
	typePrometheusRule = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
)

// monitoringConfig is the e2e's shape with a monitoring object.
func monitoringConfig(monitoringJSON string, extra ...map[string]string) map[string]string {
	cfg := withConfig(map[string]string{"monitoring": monitoringJSON})
	for _, e := range extra {
		for k, v := range e {
			cfg[k] = v
		}
	}
	return cfg
}

// withPrometheusOperator serves both of the operator's CRDs the stack's monitoring needs.
func withPrometheusOperator(r *mockgraph.Recorder) {
	r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"}
	r.ServedVersions[components.PrometheusRuleCRD] = []string{"v1"}
}

func crdRead(rec *mockgraph.Recorder, name string) bool {
	for _, r := range rec.All() {
		if r.Type == typeCRD && r.ID == name && r.Read {
			return true
		}
	}
	return false
}

// Off by default: no component, no CRD read, the graph as it always was (Pulumi.yaml's {} too).
func TestMonitoringIsOffByDefault(t *testing.T) {
	for _, cfg := range []map[string]string{withConfig(nil), withConfig(map[string]string{"monitoring": "{}"}),
		withConfig(map[string]string{"monitoring": `{"serviceMonitor": false, "rules": false}`})} {
		rec := mustRunProgram(t, cfg)
		assert.Empty(t, rec.Find(components.MonitoringType, ""))
		assert.Empty(t, rec.Find(typeServiceMonitor, ""))
		assert.Empty(t, rec.Find(typePrometheusRule, ""))
		assert.False(t, crdRead(rec, components.ServiceMonitorCRD))
	}
}

// The ServiceMonitor scrapes the exporter's Service port http at /metrics in its namespace; the
// PrometheusRule holds exactly what monitoring.Rules renders (the file promtool tests).
func TestMonitoringCreatesTheServiceMonitorAndTheRules(t *testing.T) {
	rec, err := runProgram(t, monitoringConfig(`{"serviceMonitor": true, "rules": true, "scrapeInterval": "15s", "labels": {"release": "kube-prometheus-stack"}}`), withPrometheusOperator)
	require.NoError(t, err)
	assert.True(t, crdRead(rec, components.ServiceMonitorCRD))
	assert.True(t, crdRead(rec, components.PrometheusRuleCRD))

	sm := mustFind(t, rec, typeServiceMonitor, contract.ExporterName)
	assert.Equal(t, contract.DefaultNamespace, inputStr(t, sm, "metadata", "namespace"))
	assert.Equal(t, "kube-prometheus-stack", inputStr(t, sm, "metadata", "labels", "release"))
	selector, _ := sm.Path("spec", "selector", "matchLabels")
	svc := mustFind(t, rec, typeService, contract.ExporterName)
	svcLabels, _ := svc.Path("metadata", "labels")
	assert.Equal(t, plainValue(svcLabels), plainValue(selector), "the ServiceMonitor selects the exporter's Service by its labels")
	endpoints, _ := sm.Path("spec", "endpoints")
	assert.Equal(t, []any{map[string]any{"port": "http", "path": "/metrics", "interval": "15s"}}, plainValue(endpoints))
	svcPorts, _ := svc.Path("spec", "ports")
	assert.Equal(t, "http", plainValue(svcPorts).([]any)[0].(map[string]any)["name"], "the Service's port is the one scraped")

	pr := mustFind(t, rec, typePrometheusRule, contract.ProjectName)
	assert.Equal(t, contract.DefaultNamespace, inputStr(t, pr, "metadata", "namespace"))
	assert.Equal(t, "kube-prometheus-stack", inputStr(t, pr, "metadata", "labels", "release"))
	want := monitoring.Rules(monitoring.Spec{
		Pools: []monitoring.Pool{{Name: contract.DefaultPoolName, Namespace: contract.DefaultNamespace, ScaledObject: contract.ScaledObjectName,
			HPA: contract.KedaHPAPrefix + contract.ScaledObjectName}},
		ExporterNamespace: contract.DefaultNamespace, ExporterJob: contract.ExporterName,
		NamespaceLabel: "exported_namespace", FallbackFailureThreshold: components.FallbackFailureThreshold,
		Thresholds: monitoring.DefaultThresholds(),
	})
	groups, _ := pr.Path("spec", "groups")
	assert.Equal(t, jsonPlain(t, want.Groups), plainValue(groups))
	assert.Empty(t, rec.Find(typeServiceMonitor, contract.AgentSandboxControllerService), "an adopted agent-sandbox is its owner's to scrape")

	// Both wait for the exporter's Service and namespace (and go before them on destroy).
	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	for _, r := range []mockgraph.Resource{sm, pr} {
		assert.True(t, r.DependsOn(svc), "%s waits for the Service", r.Type)
		assert.True(t, r.DependsOn(ns), "%s waits for the namespace", r.Type)
	}
}

// In install mode the stack scrapes what it installs: agent-sandbox's controller through its
// manifest's Service (beside the install, which it waits for), KEDA through the chart's monitors;
// and the rules watch each of them for being down.
func TestMonitoringWatchesTheControllersTheStackInstalls(t *testing.T) {
	cfg := installConfig(map[string]string{"agentSandboxMode": "install", "keda": `{"serviceMonitor": true}`,
		"monitoring": `{"serviceMonitor": true, "rules": true, "labels": {"release": "kube-prometheus-stack"}}`})
	rec, err := runProgram(t, cfg, withPrometheusOperator)
	require.NoError(t, err)
	sm := mustFind(t, rec, typeServiceMonitor, contract.AgentSandboxControllerService)
	assert.Equal(t, contract.AgentSandboxNamespace, inputStr(t, sm, "metadata", "namespace"))
	assert.Equal(t, "kube-prometheus-stack", inputStr(t, sm, "metadata", "labels", "release"))
	spec, _ := sm.Path("spec")
	assert.Equal(t, map[string]any{
		"selector":  map[string]any{"matchLabels": map[string]any{"app": "agent-sandbox-controller"}},
		"endpoints": []any{map[string]any{"port": "metrics", "path": "/metrics", "interval": "30s"}},
	}, plainValue(spec))
	assert.True(t, sm.DependsOn(mustFind(t, rec, typeConfigFile, "agent-sandbox-release")), "the monitor waits for the install that makes its Service")

	groups, _ := mustFind(t, rec, typePrometheusRule, contract.ProjectName).Path("spec", "groups")
	var file monitoring.RuleFile
	b, _ := json.Marshal(map[string]any{"groups": plainValue(groups)})
	require.NoError(t, json.Unmarshal(b, &file))
	last := file.Groups[len(file.Groups)-1]
	require.Equal(t, monitoring.ControllersGroupName, last.Name)
	var alerts []string
	for _, r := range last.Rules {
		alerts = append(alerts, r.Alert)
	}
	assert.Equal(t, []string{monitoring.AlertKedaOperatorDown, monitoring.AlertKedaMetricsDown, monitoring.AlertAgentSandboxDown}, alerts)
	assert.Contains(t, file.Groups[0].Rules[4].Expr, `horizontalpodautoscaler="keda-hpa-`+contract.ScaledObjectName+`"`, "the pinned rule reads the HPA KEDA makes")
}

// With a ServiceMonitor only, only its CRD is read and no PrometheusRule is made.
func TestMonitoringServiceMonitorAlone(t *testing.T) {
	rec, err := runProgram(t, monitoringConfig(`{"serviceMonitor": true}`), func(r *mockgraph.Recorder) {
		r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"}
	})
	require.NoError(t, err)
	assert.Len(t, rec.Find(typeServiceMonitor, ""), 1)
	assert.Empty(t, rec.Find(typePrometheusRule, ""))
	assert.False(t, crdRead(rec, components.PrometheusRuleCRD))
	endpoints, _ := mustFind(t, rec, typeServiceMonitor, contract.ExporterName).Path("spec", "endpoints")
	assert.Equal(t, "30s", plainValue(endpoints).([]any)[0].(map[string]any)["interval"], "the default interval")
}

// Several pools: a group per pool in one PrometheusRule, in the exporter's namespace, each
// selecting its own namespace and ScaledObject; and every threshold key reaches the rules.
func TestMonitoringRulesCoverEveryPoolWithTheirThresholds(t *testing.T) {
	cfg := monitoringConfig(`{"serviceMonitor": true, "rules": true, "namespaceLabel": "namespace",
		"frozenFor": "3m", "readFailureRatio": 0.8, "coldLaunchRatio": "0.1", "coldLaunchWindow": "1h",
		"coldLaunchMinClaims": 50, "coldLaunchFor": "10m", "exporterDownFor": "90s", "refusedPoolsFor": "15m"}`,
		map[string]string{"pools": `[{"name": "code"}, {"name": "browser", "namespace": "agents-browser"}]`})
	rec, err := runProgram(t, cfg, withPrometheusOperator)
	require.NoError(t, err)
	groups, _ := mustFind(t, rec, typePrometheusRule, contract.ProjectName).Path("spec", "groups")
	var file monitoring.RuleFile
	b, _ := json.Marshal(map[string]any{"groups": plainValue(groups)})
	require.NoError(t, json.Unmarshal(b, &file))
	require.Len(t, file.Groups, 3)
	for i, p := range []struct{ name, ns string }{{"code", contract.DefaultNamespace + "-code"}, {"browser", "agents-browser"}} {
		g := file.Groups[i]
		assert.Equal(t, monitoring.PoolGroupName(p.name), g.Name)
		frozen, cold := g.Rules[0], g.Rules[1]
		assert.Contains(t, frozen.Expr, `{namespace="`+p.ns+`",scaledObject="`+p.name+`"}`)
		assert.Contains(t, frozen.Expr, ">= 0.8")
		assert.Equal(t, "3m", frozen.For)
		assert.Contains(t, cold.Expr, `{namespace="`+p.ns+`",warmpool_name="`+p.name+`",launch_type="cold"}[1h]`)
		assert.Contains(t, cold.Expr, "> 0.1")
		assert.Contains(t, cold.Expr, ">= 50")
		assert.Equal(t, "10m", cold.For)
	}
	exp := file.Groups[2]
	assert.Equal(t, monitoring.ExporterGroupName, exp.Name)
	assert.Contains(t, exp.Rules[0].Expr, `up{job="claim-exporter",namespace="`+contract.DefaultNamespace+`"}`)
	assert.Equal(t, "90s", exp.Rules[0].For)
	assert.Equal(t, "15m", exp.Rules[1].For)
}

// Without the Prometheus Operator (its CRDs absent, or not serving v1) the preview fails naming
// the CRD and the fix, before anything in the cluster is registered.
func TestMonitoringRefusedWithoutThePrometheusOperator(t *testing.T) {
	cases := map[string]struct {
		cfg     string
		prepare func(*mockgraph.Recorder)
		want    string // in the run's error
	}{
		"no ServiceMonitor CRD": {`{"serviceMonitor": true}`, func(r *mockgraph.Recorder) {
			r.Absent[typeCRD+"/"+components.ServiceMonitorCRD] = true
		}, "resource '" + components.ServiceMonitorCRD + "' does not exist"},
		"no PrometheusRule CRD": {`{"serviceMonitor": true, "rules": true}`, func(r *mockgraph.Recorder) {
			r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"}
			r.Absent[typeCRD+"/"+components.PrometheusRuleCRD] = true
		}, "resource '" + components.PrometheusRuleCRD + "' does not exist"},
		"a ServiceMonitor CRD that serves no v1": {`{"serviceMonitor": true}`, func(r *mockgraph.Recorder) {
			r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1alpha1"}
		}, "the Prometheus Operator on this cluster does not serve the version this stack uses: CustomResourceDefinition " + components.ServiceMonitorCRD + " serves v1alpha1, but the stack needs v1"},
		"a PrometheusRule CRD that serves no v1": {`{"serviceMonitor": true, "rules": true}`, func(r *mockgraph.Recorder) {
			r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"}
		}, "CustomResourceDefinition " + components.PrometheusRuleCRD + " serves none, but the stack needs v1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, monitoringConfig(c.cfg), c.prepare)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			for _, r := range rec.All() {
				if r.Read || r.Type == typeK8sProvider || r.Type == "warmpool:index:Cluster" || r.Type == components.MonitoringType {
					continue // the cluster, its provider, the component doing the reads, the reads
				}
				t.Errorf("registered %s %s although the Prometheus Operator is missing", r.Type, r.Name)
			}
		})
	}

	// What the user reads (logged on the component, as KEDA's check does): the CRD and the fix.
	explained := componentError(t, typeCRD+"/"+components.ServiceMonitorCRD, func(ctx *pulumi.Context) error {
		_, err := components.NewMonitoring(ctx, "monitoring", &components.MonitoringArgs{ServiceMonitor: true, Rules: true})
		return err
	})
	require.Error(t, explained)
	for _, want := range []string{"the Prometheus Operator is not installed on this cluster: CustomResourceDefinition " + components.ServiceMonitorCRD + " was not found",
		"install the Prometheus Operator (or kube-prometheus-stack) first, or turn monitoring.serviceMonitor and monitoring.rules off"} {
		assert.Contains(t, explained.Error(), want)
	}
}

// Each key refused with a message naming it, before anything is registered.
func TestMonitoringKeysRejected(t *testing.T) {
	on := `"serviceMonitor": true, "rules": true, `
	cases := map[string]struct{ cfg, want string }{
		"rules without the ServiceMonitor": {`{"rules": true}`, "monitoring.rules is true but monitoring.serviceMonitor is not"},
		"a setting with both off":          {`{"labels": {"release": "x"}}`, "monitoring.labels is set, but monitoring.serviceMonitor and monitoring.rules are both off"},
		"a rule setting without rules":     {`{"serviceMonitor": true, "frozenFor": "5m"}`, "monitoring.frozenFor is a setting of the alerting rules, but monitoring.rules is off"},
		"not a bool":                       {`{"serviceMonitor": "yes"}`, "monitoring.serviceMonitor is yes; it must be true or false"},
		"a typo":                           {`{"serviceMonitors": true}`, "monitoring.serviceMonitors is not a key the program knows"},
		"scrape too often":                 {`{"serviceMonitor": true, "scrapeInterval": "5s"}`, `monitoring.scrapeInterval is "5s"; give a whole number of seconds or minutes from 10s to 5m`},
		"scrape, two units":                {`{"serviceMonitor": true, "scrapeInterval": "1m30s"}`, `monitoring.scrapeInterval is "1m30s"`},
		"scrape too rarely for the window": {`{` + on + `"scrapeInterval": "2m"}`, "monitoring.scrapeInterval is 2m, but the frozen rule reads KEDA's counters over 5m"},
		"a bad label key":                  {`{"serviceMonitor": true, "labels": {"a b": "x"}}`, `monitoring.labels has the key "a b", which is not a Kubernetes label key`},
		"a bad label value":                {`{"serviceMonitor": true, "labels": {"release": "a b"}}`, `monitoring.labels.release is "a b", which is not a Kubernetes label value`},
		"a reserved namespace label":       {`{` + on + `"namespaceLabel": "__name__"}`, `monitoring.namespaceLabel is "__name__"`},
		"a namespace label with a dash":    {`{` + on + `"namespaceLabel": "exported-namespace"}`, `monitoring.namespaceLabel is "exported-namespace"`},
		"frozen for too short":             {`{` + on + `"frozenFor": "30s"}`, `monitoring.frozenFor is "30s"; give a whole number and one unit (s, m or h) from 1m to 1h`},
		"frozen for, no unit":              {`{` + on + `"frozenFor": "5"}`, `monitoring.frozenFor is "5"`},
		"exporter down for a day":          {`{` + on + `"exporterDownFor": "24h"}`, `monitoring.exporterDownFor is "24h"`},
		"refused for zero":                 {`{` + on + `"refusedPoolsFor": "0m"}`, `monitoring.refusedPoolsFor is "0m"`},
		"cold for too long":                {`{` + on + `"coldLaunchFor": "7h"}`, `monitoring.coldLaunchFor is "7h"`},
		"cold window too short":            {`{` + on + `"coldLaunchWindow": "2m"}`, `monitoring.coldLaunchWindow is "2m"; give a whole number and one unit (s, m or h) from 5m to 24h`},
		"cold window under four scrapes":   {`{` + on + `"scrapeInterval": "75s", "coldLaunchWindow": "4m"}`, "monitoring.coldLaunchWindow is 4m, under four scrapes of 75s"},
		"read failure ratio 0":             {`{` + on + `"readFailureRatio": 0}`, "monitoring.readFailureRatio is 0; it must be above 0 and at most 1"},
		"read failure ratio above 1":       {`{` + on + `"readFailureRatio": 1.5}`, "monitoring.readFailureRatio is 1.5"},
		"read failure ratio a word":        {`{` + on + `"readFailureRatio": "half"}`, `monitoring.readFailureRatio is "half"; write a share as a decimal`},
		"cold ratio 1":                     {`{` + on + `"coldLaunchRatio": 1}`, "monitoring.coldLaunchRatio is 1; it must be above 0 and below 1"},
		"cold ratio negative":              {`{` + on + `"coldLaunchRatio": "-0.1"}`, `monitoring.coldLaunchRatio is "-0.1"`},
		"cold min claims 0":                {`{` + on + `"coldLaunchMinClaims": 0}`, "monitoring.coldLaunchMinClaims is 0; it must be 1..1000000"},
		"cold min claims not a number":     {`{` + on + `"coldLaunchMinClaims": "many"}`, `monitoring.coldLaunchMinClaims is "many", which is not a whole number`},
		"not an object":                    {`[true]`, "monitoring is not an object"},
		"pinned for too short":             {`{` + on + `"pinnedAtMaxFor": "30s"}`, `monitoring.pinnedAtMaxFor is "30s"; give a whole number and one unit (s, m or h) from 1m to 6h`},
		"unschedulable for a node launch":  {`{` + on + `"unschedulableFor": "1m"}`, `monitoring.unschedulableFor is "1m"; give a whole number and one unit (s, m or h) from 2m to 1h`},
		"controller down for a day":        {`{` + on + `"controllerDownFor": "24h"}`, `monitoring.controllerDownFor is "24h"`},
		"a relative runbook":               {`{` + on + `"runbookURL": "docs/runbook.md"}`, `monitoring.runbookURL is "docs/runbook.md"; give the address of your copy of docs/runbook.md as an http(s) URL without a #fragment`},
		"a runbook with a fragment":        {`{` + on + `"runbookURL": "https://wiki.example.com/runbook#top"}`, `monitoring.runbookURL is "https://wiki.example.com/runbook#top"`},
		"a runbook without rules":          {`{"serviceMonitor": true, "runbookURL": "https://wiki.example.com/runbook"}`, "monitoring.runbookURL is a setting of the alerting rules, but monitoring.rules is off"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, monitoringConfig(c.cfg), withPrometheusOperator)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
}

// Rules over an installed KEDA that nothing scrapes are refused: WarmPoolFrozen could never fire.
// With keda.serviceMonitor, or an adopted KEDA (its owner scrapes it), they are accepted.
func TestMonitoringRulesRefusedOverAnUnscrapedInstalledKeda(t *testing.T) {
	rules := `{"serviceMonitor": true, "rules": true}`
	rec, err := runProgram(t, installConfig(map[string]string{"monitoring": rules}), withPrometheusOperator)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "monitoring.rules is true, but the KEDA this stack installs is not scraped: WarmPoolFrozen reads KEDA's operator's metrics and could never fire")
	assert.Contains(t, err.Error(), "set keda.serviceMonitor true as well")
	assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")

	for name, cfg := range map[string]map[string]string{
		"installed and scraped": installConfig(map[string]string{"monitoring": rules, "keda": `{"serviceMonitor": true}`}),
		"adopted":               monitoringConfig(rules),
	} {
		_, err := runProgram(t, cfg, withPrometheusOperator)
		assert.NoError(t, err, name)
	}
}

// jsonPlain is v as plain JSON values, the shape a property map's Mappable gives.
func jsonPlain(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// The stale rule reads the freshness series the stack's exporter really serves: the exporter of
// one pool counts it from its namespace and selector and labels no pool, so the rule selects
// pool="" (series without the label); an exporter given a list of pools labels each by name.
func TestTheStaleRuleSelectsTheSeriesTheExporterServes(t *testing.T) {
	staleExprs := func(cfg map[string]string) map[string]string {
		rec, err := runProgram(t, cfg, withPrometheusOperator)
		require.NoError(t, err)
		groups, _ := mustFind(t, rec, typePrometheusRule, contract.ProjectName).Path("spec", "groups")
		out := map[string]string{}
		for _, g := range plainValue(groups).([]any) {
			for _, r := range g.(map[string]any)["rules"].([]any) {
				if r := r.(map[string]any); r["alert"] == monitoring.AlertCountStale {
					out[r["labels"].(map[string]any)["pool"].(string)] = r["expr"].(string)
				}
			}
		}
		return out
	}
	rules := `{"serviceMonitor": true, "rules": true, "labels": {"release": "kube-prometheus-stack"}}`
	one := staleExprs(monitoringConfig(rules))
	assert.Equal(t, map[string]string{contract.DefaultPoolName: `min(warmpool_active_claims_fresh{job="claim-exporter",namespace="` +
		contract.DefaultNamespace + `",pool=""}) == 0`}, one, "one pool: the exporter labels no pool")
	two := staleExprs(monitoringConfig(rules, map[string]string{"pools": `[{"name":"a","namespace":"team-a"},{"name":"b","namespace":"team-b"}]`}))
	for _, p := range []string{"a", "b"} {
		assert.Contains(t, two[p], `pool="`+p+`"`, "pools listed: the exporter labels each by name")
	}
}
