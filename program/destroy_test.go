package program

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
)

func TestDestroyOrderFollowsDependencies(t *testing.T) {
	for name, cfg := range map[string]map[string]string{"install": nil, "adopt": existingAdoptConfig} {
		t.Run(name, func(t *testing.T) {
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
				chart := mustFind(t, rec, typeChart, "keda")
				assert.True(t, so.DependsOn(chart), "ScaledObject -> KEDA (KEDA goes last)")
				cf := mustFind(t, rec, typeConfigFile, "agent-sandbox-release")
				assert.True(t, pool.DependsOn(cf), "pool -> agent-sandbox controller")
				// Everything in the namespace (claims and sandboxes the controllers made too) is
				// deleted while the controllers that remove their finalizers still run.
				assert.True(t, ns.DependsOn(chart), "namespace -> KEDA")
				assert.True(t, ns.DependsOn(cf), "namespace -> agent-sandbox controller")
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
