package program

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

func scaleDownOf(t *testing.T, rec *mockgraph.Recorder, scaledObject string) map[string]any {
	t.Helper()
	return behaviorOf(t, rec, scaledObject, "scaleDown")
}

func scaleUpOf(t *testing.T, rec *mockgraph.Recorder, scaledObject string) map[string]any {
	t.Helper()
	return behaviorOf(t, rec, scaledObject, "scaleUp")
}

func behaviorOf(t *testing.T, rec *mockgraph.Recorder, scaledObject, direction string) map[string]any {
	t.Helper()
	so := mustFind(t, rec, typeScaledObject, scaledObject)
	v, ok := so.Path("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", direction)
	require.True(t, ok, "the ScaledObject %s carries a %s behaviour", scaledObject, direction)
	return plainValue(v).(map[string]any)
}

func policy(typ string, value, period int) []any {
	return []any{map[string]any{"type": typ, "value": float64(value), "periodSeconds": float64(period)}}
}

// scaleDown reaches the HPA as written; unset fields keep their defaults; a listed pool takes the
// top-level scaleDown field by field unless it sets its own.
func TestScaleDownFromConfig(t *testing.T) {
	def := float64(components.DefaultScaleDownWindowSeconds)
	for name, c := range map[string]struct {
		cfg  map[string]string
		want map[string]any
	}{
		"unset: the production window":    {nil, map[string]any{"stabilizationWindowSeconds": def, "policies": policy("Pods", 3, 15)}},
		"Pulumi.yaml's default is unset":  {map[string]string{"scaleDown": "{}"}, map[string]any{"stabilizationWindowSeconds": def, "policies": policy("Pods", 3, 15)}},
		"the demo's immediate drop":       {map[string]string{"scaleDown": `{"stabilizationWindowSeconds": 0}`}, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 3, 15)}},
		"a window and one pod per minute": {map[string]string{"scaleDown": `{"stabilizationWindowSeconds": 300, "policy": "Pods", "value": 1, "periodSeconds": 60}`}, map[string]any{"stabilizationWindowSeconds": 300.0, "policies": policy("Pods", 1, 60)}},
		"a percent":                       {map[string]string{"scaleDown": `{"policy": "Percent", "value": 50}`}, map[string]any{"stabilizationWindowSeconds": def, "policies": policy("Percent", 50, 15)}},
		"a value alone is Pods":           {map[string]string{"scaleDown": `{"value": 2}`}, map[string]any{"stabilizationWindowSeconds": def, "policies": policy("Pods", 2, 15)}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, scaleDownOf(t, mustRunProgram(t, withConfig(c.cfg)), "warm-pool"))
		})
	}

	rec := mustRunProgram(t, withConfig(map[string]string{
		"scaleDown": `{"stabilizationWindowSeconds": 120, "value": 2}`,
		"pools":     `[{"name": "a"}, {"name": "b", "maxReplicas": 10, "scaleDown": {"stabilizationWindowSeconds": 0}}]`,
	}))
	assert.Equal(t, map[string]any{"stabilizationWindowSeconds": 120.0, "policies": policy("Pods", 2, 15)}, scaleDownOf(t, rec, "a"), "pool a takes the top-level scaleDown")
	assert.Equal(t, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 2, 15)}, scaleDownOf(t, rec, "b"), "pool b sets its window and keeps the top-level value")
}

// What the HPA API refuses, and what would silently mean something else, fails preview naming the
// key, before anything exists.
func TestScaleDownRejected(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  map[string]string
		want string
	}{
		"a negative window":          {map[string]string{"scaleDown": `{"stabilizationWindowSeconds": -1}`}, "scaleDown.stabilizationWindowSeconds is -1; it must be 0..3600"},
		"a window beyond the HPA's":  {map[string]string{"scaleDown": `{"stabilizationWindowSeconds": 3601}`}, "scaleDown.stabilizationWindowSeconds is 3601; it must be 0..3600"},
		"an unknown policy":          {map[string]string{"scaleDown": `{"policy": "Nodes", "value": 1}`}, `scaleDown.policy is "Nodes"; it must be Pods`},
		"a policy without its value": {map[string]string{"scaleDown": `{"policy": "Percent"}`}, `scaleDown.policy is "Percent" without scaleDown.value`},
		"a zero value":               {map[string]string{"scaleDown": `{"value": 0}`}, "scaleDown.value is 0; it must be at least 1"},
		"over 100 percent":           {map[string]string{"scaleDown": `{"policy": "Percent", "value": 101}`}, "scaleDown.value is 101 with policy Percent"},
		"a zero period":              {map[string]string{"scaleDown": `{"periodSeconds": 0}`}, "scaleDown.periodSeconds is 0; it must be at least 1"},
		"a period beyond the HPA's":  {map[string]string{"scaleDown": `{"periodSeconds": 1801}`}, "scaleDown.periodSeconds is 1801; it must be 1..1800"},
		"beyond 32 bits":             {map[string]string{"scaleDown": `{"value": 2147483648}`}, "scaleDown.value is 2147483648; the HPA's policy value is 32-bit"},
		"a typo":                     {map[string]string{"scaleDown": `{"stabilisationWindowSeconds": 60}`}, "scaleDown.stabilisationWindowSeconds is not a key the program knows"},
		"a listed pool's":            {map[string]string{"pools": `[{"name": "a", "scaleDown": {"periodSeconds": 0}}]`}, "pools[0].scaleDown.periodSeconds is 0"},
	} {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, withConfig(c.cfg))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
}

// scaleUp reaches the HPA as written; unset, one Pods policy as wide as maxReplicas, so the API
// server fills in none of its own (Kubernetes' default takes a burst through several syncs); a
// listed pool takes the top-level scaleUp field by field unless it sets its own.
func TestScaleUpFromConfig(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  map[string]string
		want map[string]any
	}{
		"unset: any rise in one sync":     {nil, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 3, 15)}},
		"Pulumi.yaml's default is unset":  {map[string]string{"scaleUp": "{}"}, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 3, 15)}},
		"as wide as a raised maxReplicas": {map[string]string{"maxReplicas": "40"}, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 40, 15)}},
		"a limit: 4 pods per 30 s":        {map[string]string{"scaleUp": `{"value": 4, "periodSeconds": 30}`}, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 4, 30)}},
		"a percent over 100":              {map[string]string{"scaleUp": `{"policy": "Percent", "value": 300}`}, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Percent", 300, 15)}},
		"a window":                        {map[string]string{"scaleUp": `{"stabilizationWindowSeconds": 30}`}, map[string]any{"stabilizationWindowSeconds": 30.0, "policies": policy("Pods", 3, 15)}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, scaleUpOf(t, mustRunProgram(t, withConfig(c.cfg)), "warm-pool"))
		})
	}

	rec := mustRunProgram(t, withConfig(map[string]string{
		"scaleUp": `{"value": 2}`,
		"pools":   `[{"name": "a"}, {"name": "b", "maxReplicas": 10, "scaleUp": {"periodSeconds": 60}}]`,
	}))
	assert.Equal(t, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 2, 15)}, scaleUpOf(t, rec, "a"), "pool a takes the top-level scaleUp")
	assert.Equal(t, map[string]any{"stabilizationWindowSeconds": 0.0, "policies": policy("Pods", 2, 60)}, scaleUpOf(t, rec, "b"), "pool b sets its period and keeps the top-level value")
}

// The scale-up keys are held to the HPA API's rules like scale-down's, named as scaleUp.
func TestScaleUpRejected(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  map[string]string
		want string
	}{
		"a negative window":          {map[string]string{"scaleUp": `{"stabilizationWindowSeconds": -1}`}, "scaleUp.stabilizationWindowSeconds is -1; it must be 0..3600"},
		"an unknown policy":          {map[string]string{"scaleUp": `{"policy": "Nodes", "value": 1}`}, `scaleUp.policy is "Nodes"; it must be Pods`},
		"a policy without its value": {map[string]string{"scaleUp": `{"policy": "Percent"}`}, `scaleUp.policy is "Percent" without scaleUp.value; give the most the pool may grow`},
		"a zero value":               {map[string]string{"scaleUp": `{"value": 0}`}, "scaleUp.value is 0; it must be at least 1 (remove it for the default: any rise in one step)"},
		"a period beyond the HPA's":  {map[string]string{"scaleUp": `{"periodSeconds": 1801}`}, "scaleUp.periodSeconds is 1801; it must be 1..1800"},
		"a typo":                     {map[string]string{"scaleUp": `{"polcy": "Pods"}`}, "scaleUp.polcy is not a key the program knows"},
		"a listed pool's":            {map[string]string{"pools": `[{"name": "a", "scaleUp": {"value": 0}}]`}, "pools[0].scaleUp.value is 0"},
	} {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, withConfig(c.cfg))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
}
