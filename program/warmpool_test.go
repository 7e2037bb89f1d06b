package program

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/warmpool/warm-pool-autoscaling-keda/components/mockgraph"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
)

func TestWarmPodsAreIsolatedSandboxes(t *testing.T) {
	rec := mustRunProgram(t, nil)
	tpl := mustFind(t, rec, typeTemplate, "warm-pool-agent")
	podTemplate, _ := tpl.Path("spec", "podTemplate")
	assert.Equal(t, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			"sandbox.amazonaws.com/network-isolated": "true", "karpenter.sh/do-not-disrupt": "true",
		}},
		"spec": map[string]any{
			"runtimeClassName": "isolated-sandbox",
			"containers": []any{map[string]any{
				"name": "agent", "image": "public.ecr.aws/docker/library/busybox:1.36.1",
				"imagePullPolicy": "IfNotPresent", "command": []any{"sleep", "infinity"},
			}},
		},
	}, plainValue(podTemplate))
	pool := mustFind(t, rec, typePool, "warm-pool")
	assert.Equal(t, "warm-pool-agent", inputStr(t, pool, "spec", "sandboxTemplateRef", "name"))
	assert.Equal(t, 1, inputInt(t, pool, "spec", "replicas"), "created at the floor")

	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	labels, _ := ns.Path("metadata", "labels")
	assert.Equal(t, map[string]any{
		"app.kubernetes.io/managed-by":     "warm-pool-autoscaling-keda",
		"warm-pool-autoscaling-keda/stack": testProject + "." + testStack,
	}, plainValue(labels))
}

// TestLaterUpdatesDoNotWritePoolReplicas replays what the engine does with the pool's inputs on a
// later `pulumi up` (resource.PropertyPath.Reset is the engine's ignoreChanges step): the HPA has
// moved the pool to 3 and the floor in config changed, yet the update must carry the live value,
// not the program's.
func TestLaterUpdatesDoNotWritePoolReplicas(t *testing.T) {
	first := mustFind(t, mustRunProgram(t, existingAdoptConfig), typePool, "warm-pool")
	assert.Equal(t, 1, inputInt(t, first, "spec", "replicas"))

	later := map[string]string{"minReplicas": "2"}
	for k, v := range existingAdoptConfig {
		later[k] = v
	}
	second := mustFind(t, mustRunProgram(t, later), typePool, "warm-pool")
	assert.Equal(t, []string{"spec.replicas"}, second.IgnoreChanges)

	// What state holds after the HPA scaled to 3 and a refresh read it back.
	old := first.Inputs.Copy()
	oldSpec := old["spec"].ObjectValue().Copy()
	oldSpec["replicas"] = resource.NewProperty(3.0)
	old["spec"] = resource.NewProperty(oldSpec)

	sent := second.Inputs.Copy()
	for _, p := range second.IgnoreChanges {
		path, err := resource.ParsePropertyPath(p)
		require.NoError(t, err)
		path.Reset(old, sent)
	}
	replicas, _ := mockgraph.Resource{Inputs: sent}.Path("spec", "replicas")
	assert.Equal(t, 3.0, replicas.NumberValue(), "an update must leave the HPA's spec.replicas alone")
}
