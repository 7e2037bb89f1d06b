package components

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/warmpool/warm-pool-autoscaling-keda/components/mockgraph"
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

func TestHeadroomFormulaIsInTargetUnits(t *testing.T) {
	// The HPA divides the formula by the target: (claims + 3*2) / 2 = claims/2 + 3.
	assert.Equal(t, "claims + 6", HeadroomFormula("2", 3))
	assert.Equal(t, "claims + 1.5", HeadroomFormula("0.5", 3))
	args := baseArgs()
	args.Headroom, args.TargetValue, args.ActivationTargetValue = 2, "0.5", "0.2"
	modifiers := scaledObjectSpec(t, args)["advanced"].(map[string]any)["scalingModifiers"].(map[string]any)
	assert.Equal(t, "claims + 1", modifiers["formula"])
	assert.Equal(t, "0.5", modifiers["target"])
	assert.Equal(t, "0.2", modifiers["activationTarget"])
}
