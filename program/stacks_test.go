package program

import (
	"maps"
	"strings"
	"testing"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// stackComponent is one AutoscaledWarmPool of a stack, and the earlier ones it depends on.
type stackComponent struct {
	name      string
	inputs    map[string]string
	dependsOn []string
}

// runComponents runs a stack holding the components, in order, on one kubernetes provider
// "caller", checked against one another as the plugin checks them (one Stacks), and returns
// what was registered and each component's outputs.
func runComponents(t *testing.T, comps []stackComponent, prepare ...func(*mockgraph.Recorder)) (*mockgraph.Recorder, map[string]map[string]any, error) {
	t.Helper()
	t.Setenv("PULUMI_CONFIG", "{}")
	rec := mockgraph.New()
	t.Cleanup(rec.Close)
	for _, p := range prepare {
		p(rec)
	}
	outputs := map[string]map[string]any{}
	err := pulumi.RunErr(func(ctx *pulumi.Context) error {
		caller, err := kubernetes.NewProvider(ctx, "caller", &kubernetes.ProviderArgs{Kubeconfig: pulumi.String(mockKubeconfig)})
		if err != nil {
			return err
		}
		var stacks Stacks
		made := map[string]pulumi.Resource{}
		for _, c := range comps {
			var deps []pulumi.Resource
			for _, d := range c.dependsOn {
				deps = append(deps, made[d])
			}
			wp, err := stacks.NewAutoscaledWarmPool(ctx, c.name, ComponentInputs{Values: c.inputs}, pulumi.Providers(caller), pulumi.DependsOn(deps))
			if err != nil {
				return err
			}
			made[c.name] = wp
			outputs[c.name] = map[string]any{}
			copyOutputs(wp, outputs[c.name])
		}
		return nil
	}, rec.Options(testProject, testStack))
	return rec, outputs, err
}

// teamPools is two pools, a and b, in namespaces of the team's own.
func teamPools(team string) string {
	return `[{"name":"a","namespace":"` + team + `-a"},{"name":"b","namespace":"` + team + `-b","sizing":{"policy":"arrivals","bootSeconds":8}}]`
}

// Two teams' components on one cluster: team-a installs KEDA and agent-sandbox and creates the
// RuntimeClass; team-b adopts all three from it and depends on it. Their pools have the same
// names, in namespaces of their own.
var twoTeams = []stackComponent{
	{name: "team-a", inputs: map[string]string{"namespace": "team-a", "pools": teamPools("team-a"),
		"runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu",
		"monitoring": `{"serviceMonitor":true,"rules":true}`, "keda": `{"serviceMonitor":true}`}},
	{name: "team-b", inputs: map[string]string{"namespace": "team-b", "pools": teamPools("team-b"),
		"kedaMode": "adopt", "agentSandboxMode": "adopt", "monitoring": `{"serviceMonitor":true,"rules":true}`},
		dependsOn: []string{"team-a"}},
}

func TestTwoComponentsInOneStackHaveNamesAndObjectsOfTheirOwn(t *testing.T) {
	rec, outputs, err := runComponents(t, twoTeams, withPrometheusOperator)
	require.NoError(t, err)
	caller := mustFind(t, rec, typeK8sProvider, "caller")
	teamA, teamB := mustFind(t, rec, AutoscaledWarmPoolType, "team-a"), mustFind(t, rec, AutoscaledWarmPoolType, "team-b")
	// Under mocks the SDK sends a local component's children for it (the engine does the same
	// with a remote one's URN): team-b waits for, and outlives, what it adopts from team-a.
	for _, install := range []mockgraph.Resource{mustFind(t, rec, typeChart, "team-a-keda"), mustFind(t, rec, typeConfigFile, "team-a-agent-sandbox-release"),
		mustFind(t, rec, typeRuntimeClass, "team-a-isolated-sandbox")} {
		assert.Truef(t, teamB.DependsOn(install), "team-b depends on %s %s, which it adopts from team-a", install.Type, install.Name)
	}
	assert.False(t, teamA.DependsOn(teamB))

	byURN := map[string]mockgraph.Resource{}
	objects := map[string]string{}
	for _, r := range rec.All() {
		if other, dup := byURN[r.URN]; dup {
			t.Errorf("URN %s is registered twice (%s and %s)", r.URN, other.Name, r.Name)
		}
		byURN[r.URN] = r
		if strings.HasPrefix(r.Type, "kubernetes:") && !r.Read {
			obj := r.Type + kubernetesName(r)
			if other, dup := objects[obj]; dup {
				t.Errorf("%s is made twice in the cluster (by %s and %s)", obj, other, r.Name)
			}
			objects[obj] = r.Name
		}
	}
	// Each resource is named after the component it belongs to.
	owner := func(r mockgraph.Resource) string {
		for r.Parent != "" && r.Type != AutoscaledWarmPoolType {
			r = byURN[r.Parent]
		}
		return r.Name
	}
	perTeam := map[string]int{}
	for _, r := range rec.All() {
		if r.URN == caller.URN || r.Type == AutoscaledWarmPoolType {
			continue
		}
		team := owner(r)
		perTeam[team]++
		assert.Truef(t, strings.HasPrefix(r.Name, team+"-"), "%s %s is team %s's, and named after it", r.Type, r.Name, team)
	}
	assert.Greater(t, perTeam["team-a"], 20)
	assert.Greater(t, perTeam["team-b"], 15)

	// team-b neither installs nor reads what team-a installs: it depends on team-a instead.
	for _, r := range rec.All() {
		if owner(r) != "team-b" {
			continue
		}
		assert.NotContainsf(t, []string{typeChart, typeConfigFile, typeRuntimeClass}, r.Type, "team-b makes no %s", r.Type)
		if r.Type == typeCRD {
			assert.Containsf(t, r.ID, "monitoring.coreos.com", "team-b reads only the Prometheus Operator's CRDs, not %s", r.ID)
		}
	}
	assert.Len(t, rec.Find(typeChart, ""), 1, "KEDA installed once")
	assert.Len(t, rec.Find(typeConfigFile, ""), 1, "agent-sandbox installed once")

	for team, out := range outputs {
		assert.Equal(t, team, out["stackNamespace"], "%s's own namespace", team)
		assert.Equal(t, team+"-a", out["namespace"], "%s's first pool", team)
	}
}

func TestComponentsThatClashInTheClusterAreRefusedNamingBoth(t *testing.T) {
	adopt := func(extra map[string]string) map[string]string {
		m := map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt"}
		maps.Copy(m, extra)
		return m
	}
	teamA := stackComponent{name: "team-a", inputs: map[string]string{"namespace": "team-a"}}
	for name, tc := range map[string]struct {
		b    stackComponent
		a    *stackComponent
		want []string
	}{
		"the default namespace in both": {
			a: &stackComponent{name: "team-a", inputs: map[string]string{}},
			b: stackComponent{name: "team-b", inputs: adopt(nil), dependsOn: []string{"team-a"}},
			want: []string{`namespace "warm-pool-autoscaling-keda" is "team-a"'s and "team-b"'s`,
				`give "team-b" another namespace (its namespace input, and each pools[].namespace)`},
		},
		"a pool in the other's namespace": {
			b:    stackComponent{name: "team-b", inputs: adopt(map[string]string{"namespace": "team-b", "pools": `[{"name":"x","namespace":"team-a"}]`}), dependsOn: []string{"team-a"}},
			want: []string{`namespace "team-a" is "team-a"'s and "team-b"'s`},
		},
		"both install KEDA and agent-sandbox": {
			b: stackComponent{name: "team-b", inputs: map[string]string{"namespace": "team-b"}},
			want: []string{`"team-a" and "team-b" both make KEDA (kedaMode: install, the default for KEDA and agent-sandbox)`,
				`set kedaMode: adopt on "team-b" and list "team-a" in its dependsOn`,
				`"team-a" and "team-b" both make agent-sandbox (agentSandboxMode: install`,
				`set agentSandboxMode: adopt on "team-b"`},
		},
		"both create the RuntimeClass": {
			a: &stackComponent{name: "team-a", inputs: map[string]string{"namespace": "team-a", "runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu"}},
			b: stackComponent{name: "team-b", inputs: adopt(map[string]string{"namespace": "team-b", "runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu"}), dependsOn: []string{"team-a"}},
			want: []string{`"team-a" and "team-b" both make the RuntimeClass isolated-sandbox (runtimeClassMode: create`,
				`set runtimeClassMode: require on "team-b"`},
		},
		"adopting without depending on the installer": {
			b: stackComponent{name: "team-b", inputs: adopt(map[string]string{"namespace": "team-b"})},
			want: []string{`"team-b" takes KEDA from the cluster (kedaMode: adopt), and "team-a" of this stack makes it, but "team-b" does not depend on "team-a": list "team-a" in "team-b"'s dependsOn`,
				`"team-b" takes agent-sandbox from the cluster`},
		},
		"the installer after the one adopting": {
			a:    &stackComponent{name: "team-a", inputs: adopt(map[string]string{"namespace": "team-a"})},
			b:    stackComponent{name: "team-b", inputs: map[string]string{"namespace": "team-b"}},
			want: []string{`"team-a" takes KEDA from the cluster (kedaMode: adopt), and "team-b" of this stack makes it, but "team-a" does not depend on "team-b": list "team-b" in "team-a"'s dependsOn`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			a := teamA
			if tc.a != nil {
				a = *tc.a
			}
			rec, _, err := runComponents(t, []stackComponent{a, tc.b})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `warmpool:index:AutoscaledWarmPool "team-b" cannot join the stack's other AutoscaledWarmPools:`)
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Empty(t, rec.Find(AutoscaledWarmPoolType, "team-b"), "team-b is refused before it registers")
			for _, r := range rec.All() {
				assert.Falsef(t, strings.HasPrefix(r.Name, "team-b"), "nothing of team-b is registered: %s %s", r.Type, r.Name)
			}
		})
	}
}

// The same component again (a preview, then the update, in one plugin) is not a second one; a
// component of another stack is not checked against this one's.
func TestTheSameComponentAgainIsNotASecondOne(t *testing.T) {
	cfg, err := LoadComponentConfig("team", "dev", "team-a", ComponentInputs{})
	require.NoError(t, err)
	var s Stacks
	_, err = s.hold("team/dev", "team-a", cfg, nil)
	require.NoError(t, err)
	_, err = s.hold("team/dev", "team-a", cfg, nil)
	require.NoError(t, err, "the same component again")
	_, err = s.hold("team/prod", "team-b", cfg, nil)
	require.NoError(t, err, "another stack")
	_, err = s.hold("team/dev", "team-b", cfg, nil)
	require.Error(t, err, "a second one in the first stack, with the same namespace and installs")
}
