package components

import (
	"strconv"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// scaledObjectSpec renders the Autoscaler under mocks and returns its ScaledObject's spec.
func scaledObjectSpec(t *testing.T, args AutoscalerArgs) map[string]any {
	t.Helper()
	rec := mockgraph.New()
	require.NoError(t, pulumi.RunErr(func(ctx *pulumi.Context) error {
		args.Namespace, args.URL = pulumi.String("ns"), pulumi.String("http://127.0.0.1:1/demand")
		_, err := NewAutoscaler(ctx, "autoscaler", &args)
		return err
	}, rec.Options("p", "s")))
	so, err := rec.One("kubernetes:keda.sh/v1alpha1:ScaledObject", args.Name)
	require.NoError(t, err)
	spec, ok := so.Path("spec")
	require.True(t, ok)
	return resource.NewProperty(spec.ObjectValue()).Mappable().(map[string]any)
}

func baseArgs() AutoscalerArgs {
	return AutoscalerArgs{Name: "warm-pool", PoolName: "warm-pool", MinReplicas: 1, MaxReplicas: 30, TargetValue: "1", PollingInterval: 15}
}

func TestNoHeadroomIsTheBlueprintsMapping(t *testing.T) {
	spec := scaledObjectSpec(t, baseArgs())
	assert.NotContains(t, spec["advanced"].(map[string]any), "scalingModifiers", "headroom 0 must leave the ScaledObject as it was: ceil(claims/target)")
	trigger := spec["triggers"].([]any)[0].(map[string]any)
	assert.NotContains(t, trigger, "name")
}

func TestHeadroomAddsItsWarmSandboxesThroughAFormula(t *testing.T) {
	args := baseArgs()
	args.Headroom = 5
	spec := scaledObjectSpec(t, args)
	assert.Equal(t, map[string]any{"formula": "claims + 5", "target": "1", "metricType": "AverageValue"},
		spec["advanced"].(map[string]any)["scalingModifiers"])
	trigger := spec["triggers"].([]any)[0].(map[string]any)
	assert.Equal(t, "claims", trigger["name"], "the formula reads the trigger by this name")
	assert.Equal(t, "1", trigger["metadata"].(map[string]any)["targetValue"], "the fallback's value is in the trigger's units: the same target keeps its replicas")
	assert.Equal(t, "currentReplicasIfHigher", spec["fallback"].(map[string]any)["behavior"], "an exporter outage still never shrinks the pool")
	assert.Contains(t, spec["advanced"].(map[string]any), "horizontalPodAutoscalerConfig")
}

// The formula is in warm sandboxes, so its target is 1 whatever the claims' target: KEDA keeps
// the fallback of a ScaledObject with scalingModifiers only for an integer target.
func TestHeadroomFormulaIsInWarmSandboxes(t *testing.T) {
	assert.Equal(t, "claims + 3", HeadroomFormula("1", 3))
	assert.Equal(t, "claims / 2 + 3", HeadroomFormula("2", 3))
	assert.Equal(t, "claims / 0.5 + 3", HeadroomFormula("0.5", 3))
	args := baseArgs()
	args.Headroom, args.TargetValue, args.ActivationTargetValue = 2, "0.5", "0.2"
	spec := scaledObjectSpec(t, args)
	modifiers := spec["advanced"].(map[string]any)["scalingModifiers"].(map[string]any)
	assert.Equal(t, "claims / 0.5 + 2", modifiers["formula"])
	assert.Equal(t, ModifiersTarget, modifiers["target"])
	assert.Equal(t, "0.4", modifiers["activationTarget"], "0.2 claims is 0.4 warm sandboxes at target 0.5")
	trigger := spec["triggers"].([]any)[0].(map[string]any)["metadata"].(map[string]any)
	assert.Equal(t, ModifiersTarget, trigger["targetValue"], "KEDA's fallback value is replicas x the trigger's target: it must equal the formula's")
}

// Every target the program writes beside a formula is one KEDA's fallback accepts, for every
// target and sizing policy: parsed as KEDA v2.21's HasValidFallback parses it.
func TestEveryFormulaKeepsKEDAsFallback(t *testing.T) {
	for _, target := range []string{"1", "1.0", "1.5", "0.5", "2", "3"} {
		for _, sizing := range []Sizing{{}, {Policy: SizingArrivals}} {
			args := baseArgs()
			args.TargetValue, args.Headroom, args.Sizing = target, 2, sizing
			spec := scaledObjectSpec(t, args)
			modifiers := spec["advanced"].(map[string]any)["scalingModifiers"].(map[string]any)
			v, err := strconv.ParseInt(modifiers["target"].(string), 10, 64)
			assert.True(t, err == nil && v > 0, "target %s, sizing %q: scalingModifiers.target %q: KEDA would ignore the fallback", target, sizing.Policy, modifiers["target"])
			for _, tr := range spec["triggers"].([]any) {
				md := tr.(map[string]any)["metadata"].(map[string]any)
				if tv, ok := md["targetValue"]; ok {
					assert.Equal(t, modifiers["target"], tv, "target %s, sizing %q: a trigger's target differs from the formula's, so the fallback's replicas would be scaled", target, sizing.Policy)
				}
			}
		}
	}
}
