package program

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

func TestExporterRoleIsExactlyGetAndListOnSandboxClaims(t *testing.T) {
	rec := mustRunProgram(t, nil)
	role := mustFind(t, rec, typeRole, "claim-exporter")
	rules, _ := role.Path("rules")
	assert.Equal(t, []any{map[string]any{
		"apiGroups": []any{"extensions.agents.x-k8s.io"}, "resources": []any{"sandboxclaims"}, "verbs": []any{"get", "list"},
	}}, plainValue(rules))
	assert.Empty(t, rec.Find("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", ""))
	assert.Empty(t, rec.Find("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", ""))
	binding := mustFind(t, rec, typeRoleBinding, "claim-exporter")
	assert.Equal(t, "Role", inputStr(t, binding, "roleRef", "kind"))
	assert.Equal(t, "claim-exporter", inputStr(t, binding, "roleRef", "name"))
	subjects, _ := binding.Path("subjects")
	assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": "claim-exporter", "namespace": contract.DefaultNamespace}}, plainValue(subjects))
}

func TestExporterPodIsLockedDown(t *testing.T) {
	rec := mustRunProgram(t, nil)
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	pod := []string{"spec", "template", "spec"}
	at := func(keys ...string) []string { return append(append([]string{}, pod...), keys...) }

	assert.False(t, inputBool(t, dep, at("automountServiceAccountToken")...))
	assert.Equal(t, "claim-exporter", inputStr(t, dep, at("serviceAccountName")...))
	assert.True(t, inputBool(t, dep, at("securityContext", "runAsNonRoot")...))
	assert.Equal(t, "RuntimeDefault", inputStr(t, dep, at("securityContext", "seccompProfile", "type")...))
	_, hostNet := dep.Path(at("hostNetwork")...)
	assert.False(t, hostNet)
	_, runtimeClass := dep.Path(at("runtimeClassName")...)
	assert.False(t, runtimeClass, "the exporter is an ordinary pod, not a sandbox")

	containers, _ := dep.Path(at("containers")...)
	require.Len(t, containers.ArrayValue(), 1)
	c := mockgraph.Resource{Inputs: containers.ArrayValue()[0].ObjectValue()}
	assert.True(t, inputBool(t, c, "securityContext", "readOnlyRootFilesystem"))
	assert.False(t, inputBool(t, c, "securityContext", "allowPrivilegeEscalation"))
	drop, _ := c.Path("securityContext", "capabilities", "drop")
	assert.Equal(t, []any{"ALL"}, plainValue(drop))
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		assert.Equal(t, "/healthz", inputStr(t, c, probe, "httpGet", "path"), "%s must not reach the Kubernetes API", probe)
	}

	// The projected token replaces the automatic one, at the path the exporter's defaults read.
	mounts, _ := c.Path("volumeMounts")
	var tokenMount map[string]any
	for _, m := range plainValue(mounts).([]any) {
		if m.(map[string]any)["name"] == "token" {
			tokenMount = m.(map[string]any)
		}
	}
	assert.Equal(t, map[string]any{"name": "token", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}, tokenMount)
	volumes, _ := dep.Path(at("volumes")...)
	var token map[string]any
	for _, v := range plainValue(volumes).([]any) {
		if v.(map[string]any)["name"] == "token" {
			token = v.(map[string]any)
		}
	}
	assert.Equal(t, map[string]any{"name": "token", "projected": map[string]any{"sources": []any{
		map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": float64(3600)}},
		map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
		map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace", "fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}}}},
	}}}, token)

	svc := mustFind(t, rec, typeService, "claim-exporter")
	assert.Equal(t, "ClusterIP", inputStr(t, svc, "spec", "type"))
	ports, _ := svc.Path("spec", "ports")
	assert.Equal(t, []any{map[string]any{"name": "http", "port": float64(8080), "targetPort": "http"}}, plainValue(ports))
	for _, typ := range []string{"kubernetes:networking.k8s.io/v1:Ingress"} {
		assert.Empty(t, rec.Find(typ, ""))
	}
}

func TestExporterRunsItsEmbeddedSourceByDefaultOnAnExistingCluster(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"claimSelector": "team=a"}))
	cm := mustFind(t, rec, typeConfigMap, "claim-exporter-src")
	data, _ := cm.Path("data")
	keys := map[string]bool{}
	for k := range plainValue(data).(map[string]any) {
		keys[k] = true
	}
	assert.True(t, keys["go.mod"])
	assert.True(t, keys["exporter__cmd__claim-exporter__main.go"], "keys are flattened paths: %v", keys)

	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	assert.True(t, dep.DependsOn(cm), "the pod waits for its source")
	containers, _ := dep.Path("spec", "template", "spec", "containers")
	c := plainValue(containers).([]any)[0].(map[string]any)
	assert.Equal(t, contract.ExporterGoImage, c["image"])
	assert.Equal(t, []any{"go", "run", "./exporter/cmd/claim-exporter"}, c["command"])
	// The first start compiles: its CPU request bounds the cold start, and a CPU limit would
	// throttle the compile even on an idle node.
	res := c["resources"].(map[string]any)
	assert.Equal(t, components.SourceExporterCPURequest, res["requests"].(map[string]any)["cpu"])
	assert.NotContains(t, res["limits"].(map[string]any), "cpu")
	env := map[string]string{}
	for _, e := range c["env"].([]any) {
		env[e.(map[string]any)["name"].(string)] = e.(map[string]any)["value"].(string)
	}
	assert.Equal(t, "off", env["GOPROXY"])
	assert.Equal(t, "-mod=mod", env["GOFLAGS"])
	assert.Equal(t, "team=a", env["EXPORTER_SELECTOR"])
	for _, k := range []string{"GOCACHE", "HOME", "GOTMPDIR"} {
		assert.True(t, strings.HasPrefix(env[k], "/scratch"), "%s must be on the writable emptyDir, is %q", k, env[k])
	}
	// Each flattened key goes back to its path.
	volumes, _ := dep.Path("spec", "template", "spec", "volumes")
	var items []any
	for _, v := range plainValue(volumes).([]any) {
		if v.(map[string]any)["name"] == "source" {
			items = v.(map[string]any)["configMap"].(map[string]any)["items"].([]any)
		}
	}
	require.Len(t, items, len(keys))
	for _, it := range items {
		m := it.(map[string]any)
		assert.Equal(t, components.ConfigMapKey(m["path"].(string)), m["key"])
		assert.True(t, keys[m["key"].(string)])
	}
}

func TestExporterImageReplacesTheSourceRun(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"exporterImage": "registry.example.com/claim-exporter:v1"})
	assert.Empty(t, rec.Find(typeConfigMap, "claim-exporter-src"))
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	containers, _ := dep.Path("spec", "template", "spec", "containers")
	c := plainValue(containers).([]any)[0].(map[string]any)
	assert.Equal(t, "registry.example.com/claim-exporter:v1", c["image"])
	assert.Nil(t, c["command"], "a prebuilt image runs its own entrypoint")
}
