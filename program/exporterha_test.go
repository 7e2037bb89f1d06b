package program

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

const typePDB = "kubernetes:policy/v1:PodDisruptionBudget"

// Two exporter replicas by default, a budget that keeps one through a voluntary disruption, a
// rollout that adds before it removes, and a spread over nodes and zones that still schedules on
// one node.
func TestExporterIsHighlyAvailableByDefault(t *testing.T) {
	rec := mustRunProgram(t, nil)
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	assert.Equal(t, contract.DefaultExporterReplicas, inputInt(t, dep, "spec", "replicas"))
	assert.Equal(t, 2, contract.DefaultExporterReplicas)
	assert.Equal(t, 0, inputInt(t, dep, "spec", "strategy", "rollingUpdate", "maxUnavailable"), "a rollout must never have fewer serving")
	assert.Equal(t, 1, inputInt(t, dep, "spec", "strategy", "rollingUpdate", "maxSurge"))

	spread, ok := dep.Path("spec", "template", "spec", "topologySpreadConstraints")
	require.True(t, ok, "the exporter's pods carry no topologySpreadConstraints")
	var keys []any
	for _, c := range plainValue(spread).([]any) {
		m := c.(map[string]any)
		keys = append(keys, m["topologyKey"])
		assert.Equal(t, "ScheduleAnyway", m["whenUnsatisfiable"], "a hard spread would leave a one-node or one-zone cluster with a Pending replica")
		assert.Equal(t, map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": contract.ExporterName}}, m["labelSelector"])
	}
	assert.Equal(t, []any{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}, keys)

	containers, _ := dep.Path("spec", "template", "spec", "containers")
	c := plainValue(containers).([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": float64(5)}}}, c["lifecycle"],
		"a stopping replica must keep serving while the Service drops it")

	pdb := mustFind(t, rec, typePDB, "claim-exporter")
	assert.Equal(t, 1, inputInt(t, pdb, "spec", "minAvailable"))
	assert.Equal(t, contract.ExporterName, inputStr(t, pdb, "spec", "selector", "matchLabels", "app.kubernetes.io/name"),
		"the budget must select the Deployment's pods")
	assert.Equal(t, "AlwaysAllow", inputStr(t, pdb, "spec", "unhealthyPodEvictionPolicy"), "a crash-looping replica must not block a drain")
	assert.Equal(t, contract.DefaultNamespace, inputStr(t, pdb, "metadata", "namespace"))
}

// One replica has no budget (minAvailable 1 of 1 would block every drain); out of range is refused.
func TestExporterReplicasIsConfigurable(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"exporterReplicas": "1"}))
	assert.Equal(t, 1, inputInt(t, mustFind(t, rec, typeDeployment, "claim-exporter"), "spec", "replicas"))
	assert.Empty(t, rec.Find(typePDB, ""), "a budget for one replica blocks every drain")

	rec = mustRunProgram(t, withConfig(map[string]string{"exporterReplicas": "3"}))
	assert.Equal(t, 3, inputInt(t, mustFind(t, rec, typeDeployment, "claim-exporter"), "spec", "replicas"))
	mustFind(t, rec, typePDB, "claim-exporter")

	for _, bad := range []int{0, 6} {
		c := validConfig()
		c.ExporterReplicas = bad
		assert.ErrorContainsf(t, c.Validate(), fmt.Sprintf("exporterReplicas is %d; it must be 1..5", bad), "exporterReplicas=%d", bad)
	}
}
