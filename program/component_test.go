package program

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// runComponent runs a stack holding one AutoscaledWarmPool "team" on a kubernetes provider
// "caller" under mocks, and returns what was registered and the component's outputs.
func runComponent(t *testing.T, inputs map[string]string, prepare ...func(*mockgraph.Recorder)) (*mockgraph.Recorder, map[string]any, error) {
	t.Helper()
	return runComponentWith(t, ComponentInputs{Values: inputs}, prepare...)
}

// runComponentWith is runComponent with the inputs' marks: the paths marked secret, and unknown.
func runComponentWith(t *testing.T, in ComponentInputs, prepare ...func(*mockgraph.Recorder)) (*mockgraph.Recorder, map[string]any, error) {
	t.Helper()
	t.Setenv("PULUMI_CONFIG", "{}")
	rec := mockgraph.New()
	t.Cleanup(rec.Close)
	for _, p := range prepare {
		p(rec)
	}
	outputs := map[string]any{}
	err := pulumi.RunErr(func(ctx *pulumi.Context) error {
		caller, err := kubernetes.NewProvider(ctx, "caller", &kubernetes.ProviderArgs{Kubeconfig: pulumi.String(mockKubeconfig)})
		if err != nil {
			return err
		}
		c, err := NewAutoscaledWarmPool(ctx, "team", in, pulumi.Providers(caller))
		if err != nil {
			return err
		}
		copyOutputs(c, outputs)
		return nil
	}, rec.Options(testProject, testStack))
	return rec, outputs, err
}

// inClusterGraph is every resource below the cluster (program) or the component: type, name and
// inputs; a name with prefix (a component's resources are named after it) without it.
func inClusterGraph(rec *mockgraph.Recorder, prefix string, skip ...string) map[string]any {
	graph := map[string]any{}
	for _, r := range rec.All() {
		if slices.Contains(skip, r.Type+"::"+r.Name) || r.Type == "pulumi:pulumi:Stack" {
			continue
		}
		graph[r.Type+"::"+strings.TrimPrefix(r.Name, prefix)] = plainValue(resource.NewProperty(r.Inputs))
	}
	return graph
}

func TestComponentDeploysWhatTheProgramDeploysInTheCluster(t *testing.T) {
	for name, tc := range map[string]struct{ inputs, program map[string]string }{
		"one pool, adopting the installs": {
			inputs:  map[string]string{"agentSandboxMode": "adopt", "kedaMode": "adopt"},
			program: existingAdoptConfig,
		},
		"two pools, installing, monitoring on": {
			inputs: map[string]string{
				"pools":      `[{"name":"a","namespace":"pool-a"},{"name":"b","namespace":"pool-b","minReplicas":0,"sizing":{"policy":"arrivals","bootSeconds":8}}]`,
				"monitoring": `{"serviceMonitor":true,"rules":true}`,
				"keda":       `{"serviceMonitor":true}`,
			},
			program: map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "local",
				"pools":      `[{"name":"a","namespace":"pool-a"},{"name":"b","namespace":"pool-b","minReplicas":0,"sizing":{"policy":"arrivals","bootSeconds":8}}]`,
				"monitoring": `{"serviceMonitor":true,"rules":true}`, "keda": `{"serviceMonitor":true}`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec, outputs, err := runComponent(t, tc.inputs, withPrometheusOperator)
			require.NoError(t, err)
			caller := mustFind(t, rec, typeK8sProvider, "caller")
			component := mustFind(t, rec, AutoscaledWarmPoolType, "team")
			got := inClusterGraph(rec, "team-", typeK8sProvider+"::caller", AutoscaledWarmPoolType+"::team")

			program, err := runProgram(t, tc.program, withPrometheusOperator)
			require.NoError(t, err)
			want := inClusterGraph(program, "", "warmpool:index:Cluster::cluster", typeK8sProvider+"::cluster")
			require.NotEmpty(t, want)
			assert.Equal(t, want, got, "the component registers the program's in-cluster resources, with the same inputs, named after it")

			children := 0
			for _, r := range rec.All() {
				if r.Parent == component.URN {
					children++
				}
				if r.URN != caller.URN && r.URN != component.URN {
					assert.Truef(t, strings.HasPrefix(r.Name, "team-"), "%s %s is named after the component", r.Type, r.Name)
				}
				if strings.HasPrefix(r.Type, "kubernetes:") && (r.Custom || r.Remote || r.Read) {
					assert.Equalf(t, caller.URN, r.ProviderURN("kubernetes"), "%s %s goes through the caller's provider", r.Type, r.Name)
				}
			}
			assert.Greater(t, children, 3, "the component's children are parented to it")
			for _, key := range []string{"namespace", "poolName", "pools", "stackNamespace", "exporterService", "exporterServiceAccount", "isolation", "stackLabel"} {
				assert.Containsf(t, outputs, key, "output %s", key)
			}
			assert.NotContains(t, outputs, "kubeconfig")
		})
	}
}

func TestComponentRefusesBadInputsWithTheProgramsMessages(t *testing.T) {
	cases := map[string]struct {
		inputs map[string]string
		want   []string
	}{
		"min above max": {map[string]string{"minReplicas": "4", "maxReplicas": "3"}, []string{"minReplicas (4) is greater than maxReplicas (3)"}},
		"not a number":  {map[string]string{"maxReplicas": "three"}, []string{`maxReplicas is "three", which is not a whole number`}},
		"shared namespace and a bad pool": {map[string]string{"pools": `[{"name":"a","namespace":"keda"}]`},
			[]string{`namespace "keda" belongs to Kubernetes or a shared install`}},
		"a cluster key": {map[string]string{"clusterMode": "create", "kubeconfig": mockKubeconfig},
			[]string{"clusterMode is not an input of warmpool:index:AutoscaledWarmPool", "kubeconfig is not an input of warmpool:index:AutoscaledWarmPool", "pass that provider in the providers option"}},
		"an unknown input": {map[string]string{"maxReplica": "3"},
			[]string{"maxReplica is not an input of warmpool:index:AutoscaledWarmPool; its inputs are activationTargetValue, agentSandboxMode,"}},
		"runtime without handler": {map[string]string{"runtimeClassMode": "create"}, []string{"runtimeClassMode=create needs runtimeClassHandler"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, _, err := runComponent(t, c.inputs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `invalid inputs of warmpool:index:AutoscaledWarmPool "team":`)
			for _, want := range c.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, []string{typeK8sProvider + "::caller"}, registeredTypes(rec.All()), "nothing of the component may be registered before its inputs are valid")
		})
	}
	// The program says the same of the same values, under its own header.
	for name, c := range cases {
		if strings.HasPrefix(name, "a cluster key") || strings.HasPrefix(name, "an unknown") {
			continue
		}
		t.Run("program/"+name, func(t *testing.T) {
			_, err := runProgram(t, c.inputs)
			require.Error(t, err)
			for _, want := range c.want {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// TestComponentInputsAreTheProgramsKeysLessTheClusters holds the component's inputs to Pulumi.yaml:
// every key the program declares is an input or a cluster key, never both, never neither.
func TestComponentInputsAreTheProgramsKeysLessTheClusters(t *testing.T) {
	inputs := ComponentInputKeys()
	declared := declaredConfigKeys(t)
	for _, key := range declared {
		assert.Truef(t, slices.Contains(inputs, key) != slices.Contains(ClusterKeys, key), "%s: an input (%v) or a cluster key (%v), exactly one", key, slices.Contains(inputs, key), slices.Contains(ClusterKeys, key))
	}
	for _, key := range append(slices.Clone(inputs), ClusterKeys...) {
		assert.Containsf(t, declared, key, "%s is not declared in Pulumi.yaml", key)
	}
	assert.Contains(t, inputs, "pools")
	assert.NotContains(t, inputs, "kubeconfig")
}

// declaredConfigKeys are the project's own keys in Pulumi.yaml.
func declaredConfigKeys(t *testing.T) []string {
	t.Helper()
	proj, err := workspace.LoadProject("../Pulumi.yaml")
	require.NoError(t, err)
	var keys []string
	for key := range proj.Config {
		if !strings.Contains(key, ":") {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// copyOutputs copies the component's outputs into into once they are known.
func copyOutputs(c *AutoscaledWarmPool, into map[string]any) {
	c.Outputs.ToMapOutput().ApplyT(func(m map[string]any) error {
		maps.Copy(into, m)
		return nil
	})
}
