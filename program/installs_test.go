package program

import (
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

func TestAdoptModesOnlyReadSharedInstalls(t *testing.T) {
	rec := mustRunProgram(t, existingAdoptConfig)

	for _, typ := range []string{typeConfigFile, typeChart} {
		assert.Empty(t, rec.Find(typ, ""), "adopt mode must not install %s", typ)
	}
	assert.Empty(t, rec.Find(typeNamespace, "keda"), "adopt mode must not own the keda namespace")
	wantReads := append([]string{contract.ScaledObjectCRD}, contract.AgentSandboxCRDs...)
	sort.Strings(wantReads)
	var gotReads []string
	for _, r := range rec.All() {
		if r.Type == typeCRD {
			assert.True(t, r.Read, "CRD %s must only be read, never managed", r.Name)
			gotReads = append(gotReads, r.ID)
		}
		// Nothing outside the stack's namespace, except reads, may be managed in this mode.
		if !r.Read && strings.HasPrefix(r.Type, "kubernetes:") {
			ns, hasNS := r.Path("metadata", "namespace")
			isOwnNamespace := r.Type == typeNamespace && r.Name == contract.DefaultNamespace
			assert.True(t, isOwnNamespace || (hasNS && ns.IsString() && ns.StringValue() == contract.DefaultNamespace),
				"%s %s is outside the stack's namespace", r.Type, r.Name)
		}
	}
	sort.Strings(gotReads)
	assert.Equal(t, wantReads, gotReads)
}

func TestRuntimeClassCreateMode(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu"})
	rc := mustFind(t, rec, typeRuntimeClass, contract.RuntimeClassName)
	assert.False(t, rc.Read)
	assert.Equal(t, "kata-qemu", inputStr(t, rc, "handler"))
	assert.Equal(t, contract.RuntimeClassName, inputStr(t, rc, "metadata", "name"))
	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	assert.True(t, ns.DependsOn(rc), "the pool's namespace (and so the pool) waits for the RuntimeClass")
}

// componentError runs build under mocks with the given objects absent and returns the error the
// component itself returned (the Go SDK reports the failed read's RPC error from RunErr instead).
func componentError(t *testing.T, absent string, build func(ctx *pulumi.Context) error) error {
	t.Helper()
	t.Setenv("PULUMI_CONFIG", "{}")
	rec := mockgraph.New()
	rec.Absent[absent] = true
	var got error
	runErr := pulumi.RunErr(func(ctx *pulumi.Context) error {
		got = build(ctx)
		return got
	}, rec.Options(testProject, testStack))
	require.Error(t, runErr)
	return got
}

func TestMissingRuntimeClassStopsBeforeThePool(t *testing.T) {
	rec, err := runProgram(t, existingAdoptConfig, func(r *mockgraph.Recorder) {
		r.Absent[typeRuntimeClass+"/"+contract.RuntimeClassName] = true
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "resource 'isolated-sandbox' does not exist")
	for _, typ := range []string{typeNamespace, typeTemplate, typePool, typeDeployment, typeScaledObject} {
		assert.Empty(t, rec.Find(typ, ""), "%s must not be registered when the runtime is missing", typ)
	}

	explained := componentError(t, typeRuntimeClass+"/"+contract.RuntimeClassName, func(ctx *pulumi.Context) error {
		_, err := components.NewSandboxRuntime(ctx, "rt", &components.SandboxRuntimeArgs{Mode: components.ModeRequire, Name: contract.RuntimeClassName})
		return err
	})
	require.Error(t, explained)
	assert.Contains(t, explained.Error(), `RuntimeClass "isolated-sandbox" was not found on the cluster`)
	assert.Contains(t, explained.Error(), "set runtimeClassMode=create and runtimeClassHandler")
}

func TestAdoptingAMissingInstallStops(t *testing.T) {
	cases := map[string]struct {
		absent string
		build  func(ctx *pulumi.Context) error
		want   []string
	}{
		"keda": {contract.ScaledObjectCRD, func(ctx *pulumi.Context) error {
			_, err := components.NewKeda(ctx, "keda", &components.KedaArgs{Mode: components.ModeAdopt})
			return err
		}, []string{"KEDA is not installed on this cluster: CustomResourceDefinition scaledobjects.keda.sh was not found", "helm install keda", "kedaMode=install"}},
		"agent-sandbox": {"sandboxwarmpools.extensions.agents.x-k8s.io", func(ctx *pulumi.Context) error {
			_, err := components.NewAgentSandbox(ctx, "agent-sandbox", &components.AgentSandboxArgs{Mode: components.ModeAdopt})
			return err
		}, []string{"agent-sandbox is not installed on this cluster: CustomResourceDefinition sandboxwarmpools.extensions.agents.x-k8s.io was not found", "agentSandboxMode=install"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, existingAdoptConfig, func(r *mockgraph.Recorder) { r.Absent[typeCRD+"/"+c.absent] = true })
			require.Error(t, err)
			assert.Contains(t, err.Error(), "resource '"+c.absent+"' does not exist")
			for _, typ := range []string{typeNamespace, typePool, typeScaledObject} {
				assert.Empty(t, rec.Find(typ, ""), "%s must not be registered", typ)
			}

			explained := componentError(t, typeCRD+"/"+c.absent, c.build)
			require.Error(t, explained)
			for _, want := range c.want {
				assert.Contains(t, explained.Error(), want)
			}
		})
	}
}

// Adopt mode needs the API versions the stack writes to be served, not only the CRDs to exist:
// an install that serves only an older version stops the run before anything is created.
func TestAdoptingAnInstallThatDoesNotServeTheVersionStops(t *testing.T) {
	cases := map[string]struct {
		crd      string
		versions []string
		want     string
	}{
		"keda without v1alpha1": {contract.ScaledObjectCRD, []string{"v2"},
			"CustomResourceDefinition scaledobjects.keda.sh serves v2, but the stack needs v1alpha1"},
		"agent-sandbox v1alpha1 only": {"sandboxwarmpools.extensions.agents.x-k8s.io", []string{"v1alpha1"},
			"CustomResourceDefinition sandboxwarmpools.extensions.agents.x-k8s.io serves v1alpha1, but the stack needs v1beta1"},
		"agent-sandbox serving nothing": {"sandboxclaims.extensions.agents.x-k8s.io", nil,
			"CustomResourceDefinition sandboxclaims.extensions.agents.x-k8s.io serves none, but the stack needs v1beta1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, existingAdoptConfig, func(r *mockgraph.Recorder) { r.ServedVersions[c.crd] = c.versions })
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "adopt mode only reads")
			for _, typ := range []string{typeNamespace, typeTemplate, typePool, typeDeployment, typeScaledObject} {
				assert.Empty(t, rec.Find(typ, ""), "%s must not be registered", typ)
			}
		})
	}
}
