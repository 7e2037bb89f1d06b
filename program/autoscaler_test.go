package program

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

func TestScaledObjectTargetsThePoolAndReadsTheExporter(t *testing.T) {
	rec := mustRunProgram(t, nil)
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	assert.Equal(t, "warm-pool", inputStr(t, so, "metadata", "name"))
	assert.Equal(t, contract.DefaultNamespace, inputStr(t, so, "metadata", "namespace"))
	ref, _ := so.Path("spec", "scaleTargetRef")
	assert.Equal(t, map[string]any{
		"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool", "name": "warm-pool",
	}, plainValue(ref))
	assert.Equal(t, 1, inputInt(t, so, "spec", "minReplicaCount"))
	assert.Equal(t, 3, inputInt(t, so, "spec", "maxReplicaCount"))
	assert.Equal(t, 15, inputInt(t, so, "spec", "pollingInterval"))

	triggers, _ := so.Path("spec", "triggers")
	assert.Equal(t, []any{map[string]any{
		"type": "metrics-api", "metricType": "AverageValue",
		"metadata": map[string]any{
			"url":           "http://claim-exporter.warm-pool-autoscaling-keda.svc.cluster.local:8080/demand",
			"valueLocation": "active_claims", "targetValue": "1", "format": "json",
			// The exporter's 2 s scrape deadline plus 1 s: a slow API reaches KEDA as a stale count.
			"timeout": "3000",
		},
	}}, plainValue(triggers))

	// Unset, scaleDown is the production default: a window, then any drop in one step; scaleUp
	// names its policy (any rise in one step), so the API server adds none of its own.
	behavior, _ := so.Path("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
	assert.Equal(t, map[string]any{
		"scaleUp": map[string]any{
			"stabilizationWindowSeconds": float64(0),
			"policies":                   []any{map[string]any{"type": "Pods", "value": float64(3), "periodSeconds": float64(15)}},
		},
		"scaleDown": map[string]any{
			"stabilizationWindowSeconds": float64(components.DefaultScaleDownWindowSeconds),
			"policies":                   []any{map[string]any{"type": "Pods", "value": float64(3), "periodSeconds": float64(15)}},
		},
	}, plainValue(behavior))
	fallback, _ := so.Path("spec", "fallback")
	assert.Equal(t, map[string]any{"failureThreshold": float64(3), "replicas": float64(0), "behavior": "currentReplicasIfHigher"}, plainValue(fallback))
}

func TestScaledObjectFollowsConfig(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{
		"namespace": "pool-b", "poolName": "pool-b", "minReplicas": "0", "maxReplicas": "5", "loadCap": "4",
		"targetValue": "2", "activationTargetValue": "0.5", "pollingInterval": "7", "fallbackReplicas": "5",
		"exporterUrl": "http://127.0.0.1:18080/demand",
	})
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	assert.Equal(t, "pool-b", inputStr(t, so, "metadata", "namespace"))
	assert.Equal(t, "pool-b", inputStr(t, so, "spec", "scaleTargetRef", "name"))
	assert.Equal(t, 0, inputInt(t, so, "spec", "minReplicaCount"))
	assert.Equal(t, 5, inputInt(t, so, "spec", "maxReplicaCount"))
	assert.Equal(t, 7, inputInt(t, so, "spec", "pollingInterval"))
	assert.Equal(t, 5, inputInt(t, so, "spec", "fallback", "replicas"))
	triggers, _ := so.Path("spec", "triggers")
	meta := plainValue(triggers).([]any)[0].(map[string]any)["metadata"].(map[string]any)
	assert.Equal(t, "http://127.0.0.1:18080/demand", meta["url"])
	assert.Equal(t, "2", meta["targetValue"])
	assert.Equal(t, "0.5", meta["activationTargetValue"])
	policies, _ := so.Path("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleDown", "policies")
	assert.Equal(t, float64(5), plainValue(policies).([]any)[0].(map[string]any)["value"], "one step back to the floor from max")
	pool := mustFind(t, rec, typePool, "pool-b")
	assert.Equal(t, 0, inputInt(t, pool, "spec", "replicas"), "the pool starts at the floor")
}
