package program

import (
	"encoding/json"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"warmpool.local/warm-pool-autoscaling-keda/components"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

func TestWarmPodsAreIsolatedSandboxes(t *testing.T) {
	rec := mustRunProgram(t, nil)
	tpl := mustFind(t, rec, typeTemplate, "warm-pool-agent")
	podTemplate, _ := tpl.Path("spec", "podTemplate")
	// Where they run (create mode: the stack's NodePool) is TestCreateModeSandboxesRunOnlyOnTheStacksNodePool's.
	spec := plainValue(podTemplate).(map[string]any)["spec"].(map[string]any)
	delete(spec, "nodeSelector")
	delete(spec, "tolerations")
	assert.Equal(t, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			"sandbox.amazonaws.com/network-isolated": "true", "karpenter.sh/do-not-disrupt": "true",
		}},
		"spec": map[string]any{
			"runtimeClassName":             "isolated-sandbox",
			"automountServiceAccountToken": false,
			"securityContext": map[string]any{
				"runAsNonRoot": true, "runAsUser": float64(65532), "runAsGroup": float64(65532),
				"seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
			"containers": []any{map[string]any{
				"name": "agent", "image": "public.ecr.aws/docker/library/busybox:1.36.1",
				"imagePullPolicy": "IfNotPresent", "command": []any{"sleep", "infinity"},
				"securityContext": map[string]any{
					"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}},
					"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"},
				},
			}},
		},
	}, map[string]any{"metadata": plainValue(podTemplate).(map[string]any)["metadata"], "spec": spec})
	pool := mustFind(t, rec, typePool, "warm-pool")
	assert.Equal(t, "warm-pool-agent", inputStr(t, pool, "spec", "sandboxTemplateRef", "name"))
	assert.Equal(t, 1, inputInt(t, pool, "spec", "replicas"), "created at the floor")

	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	labels, _ := ns.Path("metadata", "labels")
	assert.Equal(t, map[string]any{
		"app.kubernetes.io/managed-by":     "warm-pool-autoscaling-keda",
		"warm-pool-autoscaling-keda/stack": testProject + "." + testStack,
		// Pod Security: see TestNamespaceEnforcesRestrictedAndItsPodsMeetIt.
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.36",
		"pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "v1.36",
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "v1.36",
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

// The stack's namespace enforces the restricted Pod Security Standard, and every pod the stack
// puts in it meets that standard, as judged by the Pod Security admission library the API server
// itself runs: the sandbox pods from the template, and the exporter on both of its paths.
func TestNamespaceEnforcesRestrictedAndItsPodsMeetIt(t *testing.T) {
	for name, cfg := range map[string]map[string]string{
		"exporter from source": nil,
		"exporter image":       {"exporterImage": "registry.example.com/claim-exporter:v1"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := mustRunProgram(t, cfg)
			ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
			labels, _ := ns.Path("metadata", "labels")
			got := plainValue(labels).(map[string]any)
			for k, v := range map[string]string{
				"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.36",
				"pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "v1.36",
				"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "v1.36",
			} {
				assert.Equal(t, v, got[k], "namespace label %s", k)
			}

			tpl := mustFind(t, rec, typeTemplate, "warm-pool-agent")
			sandboxPod, _ := tpl.Path("spec", "podTemplate")
			assert.Empty(t, restrictedViolations(t, plainValue(sandboxPod)), "the sandbox pods must meet restricted")
			dep := mustFind(t, rec, typeDeployment, "claim-exporter")
			exporterPod, _ := dep.Path("spec", "template")
			assert.Empty(t, restrictedViolations(t, plainValue(exporterPod)), "the exporter pod must meet restricted")

			// The evaluator is live: the sandbox pod without its security settings is rejected.
			bare := plainValue(sandboxPod).(map[string]any)
			spec := bare["spec"].(map[string]any)
			delete(spec, "securityContext")
			delete(spec["containers"].([]any)[0].(map[string]any), "securityContext")
			assert.NotEmpty(t, restrictedViolations(t, bare), "a sandbox pod without the security settings must be rejected")
		})
	}
}

// restrictedViolations evaluates a pod template (as the program declares it) against the
// restricted level at the version the namespace pins, with the Pod Security admission library.
func restrictedViolations(t *testing.T, podTemplate any) []string {
	t.Helper()
	b, err := json.Marshal(podTemplate)
	require.NoError(t, err)
	var tpl corev1.PodTemplateSpec
	require.NoError(t, json.Unmarshal(b, &tpl))
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	require.NoError(t, err)
	version, err := psaapi.ParseVersion(components.PodSecurityVersion)
	require.NoError(t, err)
	var violations []string
	for _, r := range evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: version}, &tpl.ObjectMeta, &tpl.Spec) {
		if !r.Allowed {
			violations = append(violations, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return violations
}
