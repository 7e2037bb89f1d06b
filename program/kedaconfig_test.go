package program

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// installConfig is an existing cluster on which the stack installs KEDA.
func installConfig(extra map[string]string) map[string]string {
	cfg := map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kedaMode": "install"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func chartValues(t *testing.T, rec *mockgraph.Recorder) map[string]any {
	t.Helper()
	chart := mustFind(t, rec, typeChart, "keda")
	v, ok := chart.Path("values")
	if !ok {
		return nil
	}
	return plainValue(v).(map[string]any)
}

// Unset, the install runs two of each with a budget; Pulumi.yaml's default ({}) is unset.
func TestKedaInstallDefaultsToAStandbyOfEach(t *testing.T) {
	for _, cfg := range []map[string]string{installConfig(nil), installConfig(map[string]string{"keda": "{}"})} {
		v := chartValues(t, mustRunProgram(t, cfg))
		assert.Equal(t, map[string]any{"replicaCount": 2.0}, v["operator"])
		assert.Equal(t, map[string]any{"replicaCount": 2.0}, v["metricsServer"])
		assert.Equal(t, map[string]any{"operator": map[string]any{"minAvailable": 1.0}, "metricServer": map[string]any{"minAvailable": 1.0}}, v["podDisruptionBudget"])
		assert.NotContains(t, v, "resources", "unset resources are the chart's")
		assert.NotContains(t, v, "prometheus")
	}
}

// Each key reaches the chart under the chart's own name; one replica gets no budget (it would
// block every drain); the ServiceMonitors need the Prometheus Operator's CRD, which is read.
func TestKedaInstallValuesFromConfig(t *testing.T) {
	withMonitors := installConfig(map[string]string{"keda": `{"operatorReplicas": 3, "metricsServerReplicas": 1,
		"resources": {"operator": {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}},
		"serviceMonitor": true}`})
	rec, err := runProgram(t, withMonitors, func(r *mockgraph.Recorder) { r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"} })
	require.NoError(t, err)
	v := chartValues(t, rec)
	assert.Equal(t, map[string]any{"replicaCount": 3.0}, v["operator"])
	assert.Equal(t, map[string]any{"replicaCount": 1.0}, v["metricsServer"])
	assert.Equal(t, map[string]any{"operator": map[string]any{"minAvailable": 1.0}}, v["podDisruptionBudget"])
	assert.Equal(t, map[string]any{"operator": map[string]any{"requests": map[string]any{"cpu": "200m", "memory": "256Mi"}, "limits": map[string]any{"memory": "512Mi"}}}, v["resources"])
	monitored := map[string]any{"enabled": true, "serviceMonitor": map[string]any{"enabled": true}}
	assert.Equal(t, map[string]any{"operator": monitored, "metricServer": monitored}, v["prometheus"])
	read := false
	for _, r := range rec.All() {
		if r.Type == typeCRD && r.ID == components.ServiceMonitorCRD {
			read = r.Read
		}
	}
	assert.True(t, read, "serviceMonitor reads %s first", components.ServiceMonitorCRD)

	// Without the Prometheus Operator the switch fails at preview, saying so, before the chart.
	rec, err = runProgram(t, withMonitors)
	require.Error(t, err)
	assert.Contains(t, err.Error(), components.ServiceMonitorCRD)
	assert.Empty(t, rec.Find(typeChart, ""), "no chart when its ServiceMonitors cannot be made")
}

// KEDA's ServiceMonitors carry monitoring.labels, as the exporter's does, so one Prometheus
// selector picks every monitor the rules read; without labels the chart's own are left alone.
func TestKedaServiceMonitorsCarryTheMonitoringLabels(t *testing.T) {
	for _, tc := range []struct {
		monitoring string
		want       map[string]any
	}{
		{`{"serviceMonitor": true, "labels": {"release": "kube-prometheus-stack"}}`, map[string]any{"enabled": true, "additionalLabels": map[string]any{"release": "kube-prometheus-stack"}}},
		{`{"serviceMonitor": true}`, map[string]any{"enabled": true}},
	} {
		cfg := installConfig(map[string]string{"keda": `{"serviceMonitor": true}`, "monitoring": tc.monitoring})
		rec, err := runProgram(t, cfg, func(r *mockgraph.Recorder) { r.ServedVersions[components.ServiceMonitorCRD] = []string{"v1"} })
		require.NoError(t, err, tc.monitoring)
		v := chartValues(t, rec)
		monitored := map[string]any{"enabled": true, "serviceMonitor": tc.want}
		assert.Equal(t, map[string]any{"operator": monitored, "metricServer": monitored}, v["prometheus"], tc.monitoring)
	}
}

// Bad values are refused before anything exists, naming the key; in adopt mode any value is
// refused (a shared install is never re-valued), while Pulumi.yaml's default passes.
func TestKedaInstallValuesRejected(t *testing.T) {
	cases := map[string]struct {
		cfg  map[string]string
		want string
	}{
		"no operator":        {installConfig(map[string]string{"keda": `{"operatorReplicas": 0}`}), "keda.operatorReplicas is 0; it must be 1..5"},
		"too many servers":   {installConfig(map[string]string{"keda": `{"metricsServerReplicas": 6}`}), "keda.metricsServerReplicas is 6; it must be 1..5"},
		"negative memory":    {installConfig(map[string]string{"keda": `{"resources": {"operator": {"requests": {"memory": "-1Gi"}}}}`}), `keda.resources.operator.requests.memory is "-1Gi"; give a positive Kubernetes quantity`},
		"a GPU":              {installConfig(map[string]string{"keda": `{"resources": {"metricServer": {"limits": {"nvidia.com/gpu": "1"}}}}`}), `keda.resources.metricServer.limits has "nvidia.com/gpu"`},
		"request over limit": {installConfig(map[string]string{"keda": `{"resources": {"operator": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}}`}), "keda.resources.operator.requests.cpu (2) is above its limit (1)"},
		"a typo":             {installConfig(map[string]string{"keda": `{"operatorReplica": 2}`}), "keda.operatorReplica is not a key the program knows"},
		"adopted KEDA":       {withConfig(map[string]string{"keda": `{"operatorReplicas": 2}`}), "keda sets KEDA's install values, but kedaMode is adopt"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
	_, err := runProgram(t, withConfig(map[string]string{"keda": "{}"}))
	require.NoError(t, err, "Pulumi.yaml's default beside an adopted KEDA")
}
