package program

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// destroyRuns is how many times the destroy-order tests run the program: the namespace's
// dependencies must be the same on every run. When they depended on the KEDA and agent-sandbox
// components, the Go SDK recorded the children those had registered so far, and 2 runs in 30
// recorded no KEDA (pulumi/pulumi#7791, #7852).
const destroyRuns = 10

// namespaceDependsOnTheInstalls asserts that the stack's namespace records as its dependencies
// exactly the resources that must outlive it, by name: the RuntimeClass and KEDA's chart and
// agent-sandbox's release manifest (install) or the CRDs the stack read (adopt), and the stack's
// NodePool when it has one (the sandboxes, claimed ones too, are gone before their nodes' pool).
// Exactly: a dependency on the Keda component instead also recorded the keda Namespace it had
// registered.
func namespaceDependsOnTheInstalls(t *testing.T, rec *mockgraph.Recorder, install bool) {
	t.Helper()
	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	want := append([]mockgraph.Resource{mustFind(t, rec, typeRuntimeClass, contract.RuntimeClassName)}, rec.Find(typeNodePool, contract.SandboxNodePoolName)...)
	if install {
		want = append(want, mustFind(t, rec, typeChart, "keda"), mustFind(t, rec, typeConfigFile, "agent-sandbox-release"))
	} else {
		for _, name := range append([]string{contract.ScaledObjectCRD}, contract.AgentSandboxCRDs...) {
			want = append(want, mustFind(t, rec, typeCRD, name))
		}
	}
	for _, w := range want {
		require.Truef(t, ns.DependsOn(w), "the namespace must record %s %s among its dependencies (it has %v)", w.Type, w.Name, ns.Dependencies)
	}
	require.Len(t, ns.Dependencies, len(want), "the namespace depends on these and nothing else: %v", ns.Dependencies)
}

func TestDestroyOrderFollowsDependencies(t *testing.T) {
	for name, cfg := range map[string]map[string]string{"install": nil, "adopt": existingAdoptConfig} {
		t.Run(name, func(t *testing.T) {
			for run := 0; run < destroyRuns; run++ {
				rec := mustRunProgram(t, cfg)
				namespaceDependsOnTheInstalls(t, rec, name == "install")
			}
			rec := mustRunProgram(t, cfg)
			ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
			so := mustFind(t, rec, typeScaledObject, "warm-pool")
			pool := mustFind(t, rec, typePool, "warm-pool")
			tpl := mustFind(t, rec, typeTemplate, "warm-pool-agent")
			dep := mustFind(t, rec, typeDeployment, "claim-exporter")
			svc := mustFind(t, rec, typeService, "claim-exporter")

			// Pulumi deletes dependents first: ScaledObject (and KEDA's HPA) before the exporter and the pool,
			// the pool before its template, everything in the namespace before the namespace.
			assert.True(t, so.DependsOn(dep), "ScaledObject -> exporter Deployment")
			assert.True(t, so.DependsOn(svc), "ScaledObject -> exporter Service")
			assert.True(t, so.DependsOn(pool), "ScaledObject -> pool")
			assert.True(t, pool.DependsOn(tpl), "pool -> template")
			if name == "install" {
				// The ScaledObject goes before KEDA through the namespace, which records the chart
				// (namespaceDependsOnTheInstalls); the pool and template go before agent-sandbox.
				assert.True(t, so.DependsOn(ns), "ScaledObject -> namespace -> KEDA")
				cf := mustFind(t, rec, typeConfigFile, "agent-sandbox-release")
				assert.True(t, pool.DependsOn(cf), "pool -> agent-sandbox controller")
				assert.True(t, tpl.DependsOn(cf), "template -> agent-sandbox controller")
			}
			inNamespace := 0
			for _, r := range rec.All() {
				if v, ok := r.Path("metadata", "namespace"); ok && v.IsString() && v.StringValue() == contract.DefaultNamespace {
					inNamespace++
					assert.True(t, r.DependsOn(ns), "%s %s must depend on the namespace", r.Type, r.Name)
				}
			}
			assert.GreaterOrEqual(t, inNamespace, 8)
		})
	}
}
