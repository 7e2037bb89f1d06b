package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/components/mockgraph"
)

const (
	testProject = "warm-pool-autoscaling-keda"
	testStack   = "dev"

	typeNamespace    = "kubernetes:core/v1:Namespace"
	typeTemplate     = "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxTemplate"
	typePool         = "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxWarmPool"
	typeScaledObject = "kubernetes:keda.sh/v1alpha1:ScaledObject"
	typeDeployment   = "kubernetes:apps/v1:Deployment"
	typeService      = "kubernetes:core/v1:Service"
	typeConfigMap    = "kubernetes:core/v1:ConfigMap"
	typeRole         = "kubernetes:rbac.authorization.k8s.io/v1:Role"
	typeRoleBinding  = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
	typeSA           = "kubernetes:core/v1:ServiceAccount"
	typeCRD          = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
	typeRuntimeClass = "kubernetes:node.k8s.io/v1:RuntimeClass"
	typeConfigFile   = "kubernetes:yaml/v2:ConfigFile"
	typeChart        = "kubernetes:helm.sh/v4:Chart"
	typeK8sProvider  = "pulumi:providers:kubernetes"
	typeEksCluster   = "eks:index:Cluster"
)

const mockKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443"}
contexts:
- name: local
  context: {cluster: local, user: local}
- name: other
  context: {cluster: local, user: local}
current-context: other
users:
- name: local
  user: {token: abc}
`

// existingAdoptConfig is the e2e's shape: an existing cluster whose KEDA and agent-sandbox the stack only reads.
var existingAdoptConfig = map[string]string{
	"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "local",
	"agentSandboxMode": "adopt", "kedaMode": "adopt",
}

// runProgram runs the whole program under mocks with the given project config.
func runProgram(t *testing.T, cfg map[string]string, prepare ...func(*mockgraph.Recorder)) (*mockgraph.Recorder, error) {
	t.Helper()
	full := map[string]string{}
	for k, v := range cfg {
		full[testProject+":"+k] = v
	}
	b, err := json.Marshal(full)
	require.NoError(t, err)
	t.Setenv("PULUMI_CONFIG", string(b))
	rec := mockgraph.New()
	for _, p := range prepare {
		p(rec)
	}
	return rec, pulumi.RunErr(program, rec.Options(testProject, testStack))
}

func mustRunProgram(t *testing.T, cfg map[string]string) *mockgraph.Recorder {
	t.Helper()
	rec, err := runProgram(t, cfg)
	require.NoError(t, err)
	return rec
}

func mustFind(t *testing.T, rec *mockgraph.Recorder, typ, name string) mockgraph.Resource {
	t.Helper()
	r, err := rec.One(typ, name)
	require.NoError(t, err)
	return r
}

func inputStr(t *testing.T, r mockgraph.Resource, keys ...string) string {
	t.Helper()
	v, ok := r.Path(keys...)
	require.Truef(t, ok, "%s %s has no %v", r.Type, r.Name, keys)
	if v.IsSecret() {
		v = v.SecretValue().Element
	}
	require.Truef(t, v.IsString(), "%s %s %v is %v, not a string", r.Type, r.Name, keys, v)
	return v.StringValue()
}

func inputInt(t *testing.T, r mockgraph.Resource, keys ...string) int {
	t.Helper()
	v, ok := r.Path(keys...)
	require.Truef(t, ok, "%s %s has no %v", r.Type, r.Name, keys)
	require.Truef(t, v.IsNumber(), "%s %s %v is %v, not a number", r.Type, r.Name, keys, v)
	return int(v.NumberValue())
}

func inputBool(t *testing.T, r mockgraph.Resource, keys ...string) bool {
	t.Helper()
	v, ok := r.Path(keys...)
	require.Truef(t, ok, "%s %s has no %v", r.Type, r.Name, keys)
	require.Truef(t, v.IsBool(), "%s %s %v is %v, not a bool", r.Type, r.Name, keys, v)
	return v.BoolValue()
}

// plain turns a property value into plain Go values for whole-structure comparisons.
func plainValue(v resource.PropertyValue) any {
	if v.IsSecret() {
		v = v.SecretValue().Element
	}
	return v.Mappable()
}

func registeredTypes(rs []mockgraph.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Type+"::"+r.Name)
	}
	sort.Strings(out)
	return out
}

func TestCreateModeMakesAnAutoModeClusterWithItsOwnNetwork(t *testing.T) {
	rec := mustRunProgram(t, nil)

	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assert.True(t, eks.Remote, "pulumi-eks Cluster is a remote component")
	assert.True(t, inputBool(t, eks, "autoMode", "enabled"))
	assert.Equal(t, "API", inputStr(t, eks, "authenticationMode"))
	assert.False(t, inputBool(t, eks, "corednsAddonOptions", "enabled"), "Auto Mode ships its own DNS")
	assert.Equal(t, "1.36", inputStr(t, eks, "version"))
	assert.Equal(t, testProject+"-"+testStack, inputStr(t, eks, "name"))

	assert.Len(t, rec.Find("aws:ec2/vpc:Vpc", ""), 1)
	assert.Len(t, rec.Find("aws:ec2/internetGateway:InternetGateway", ""), 1)
	assert.Len(t, rec.Find("aws:ec2/natGateway:NatGateway", ""), 1)
	assert.Len(t, rec.Find("aws:ec2/routeTable:RouteTable", ""), 2)
	subnets := rec.Find("aws:ec2/subnet:Subnet", "")
	require.Len(t, subnets, 4)
	zones := map[string]map[string]bool{"public": {}, "private": {}}
	for _, s := range subnets {
		kind := "private"
		tag := "kubernetes.io/role/internal-elb"
		if strings.Contains(s.Name, "public") {
			kind, tag = "public", "kubernetes.io/role/elb"
		}
		assert.Equal(t, "1", inputStr(t, s, "tags", tag), "subnet %s must carry %s for load balancers", s.Name, tag)
		zones[kind][inputStr(t, s, "availabilityZone")] = true
	}
	assert.Len(t, zones["public"], 2, "public subnets span two AZs")
	assert.Len(t, zones["private"], 2, "private subnets span two AZs")

	// The kubeconfig handed to the provider is the cluster's, as a secret.
	provider := mustFind(t, rec, typeK8sProvider, "cluster")
	kc, ok := provider.Path("kubeconfig")
	require.True(t, ok)
	assert.True(t, kc.IsSecret() || kc.ContainsSecrets(), "kubeconfig must be secret")

	// Install modes.
	cf := mustFind(t, rec, typeConfigFile, "agent-sandbox-release")
	assert.Equal(t, "https://github.com/kubernetes-sigs/agent-sandbox/releases/download/v1.0.10/sandbox-with-extensions.yaml", inputStr(t, cf, "file"))
	chart := mustFind(t, rec, typeChart, "keda")
	assert.Equal(t, "keda", inputStr(t, chart, "chart"))
	assert.Equal(t, "2.21.0", inputStr(t, chart, "version"))
	assert.Equal(t, "keda", inputStr(t, chart, "namespace"))
	assert.Equal(t, "https://kedacore.github.io/charts", inputStr(t, chart, "repositoryOpts", "repo"))
	kedaNS := mustFind(t, rec, typeNamespace, "keda")
	assert.True(t, chart.DependsOn(kedaNS), "the chart waits for its namespace")

	// require mode reads the RuntimeClass and creates none.
	rc := mustFind(t, rec, typeRuntimeClass, components.RuntimeClassName)
	assert.True(t, rc.Read)
	assert.Equal(t, components.RuntimeClassName, rc.ID)
}

func TestCreateModeWithAGivenVPCMakesNoNetwork(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{
		"vpcId": "vpc-123", "privateSubnetIds": `["subnet-a","subnet-b"]`, "publicSubnetIds": `["subnet-c","subnet-d"]`,
	})
	for _, r := range rec.All() {
		assert.False(t, strings.HasPrefix(r.Type, "aws:ec2/"), "no network resource expected, found %s %s", r.Type, r.Name)
	}
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assert.Equal(t, "vpc-123", inputStr(t, eks, "vpcId"))
	v, _ := eks.Path("privateSubnetIds")
	assert.Equal(t, []any{"subnet-a", "subnet-b"}, plainValue(v))
}

func TestExistingModeCreatesNoAWSResource(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "local"})
	for _, r := range rec.All() {
		assert.False(t, strings.HasPrefix(r.Type, "aws:") || strings.HasPrefix(r.Type, "eks:"),
			"existing mode must not touch AWS, found %s %s", r.Type, r.Name)
	}
	provider := mustFind(t, rec, typeK8sProvider, "cluster")
	kc := inputStr(t, provider, "kubeconfig")
	assert.Contains(t, kc, `current-context: "local"`, "the chosen context becomes current-context")
	assert.NotContains(t, kc, "current-context: other")
	// Install modes still install on an existing cluster.
	assert.Len(t, rec.Find(typeConfigFile, ""), 1)
	assert.Len(t, rec.Find(typeChart, ""), 1)
}

func TestAdoptModesOnlyReadSharedInstalls(t *testing.T) {
	rec := mustRunProgram(t, existingAdoptConfig)

	for _, typ := range []string{typeConfigFile, typeChart} {
		assert.Empty(t, rec.Find(typ, ""), "adopt mode must not install %s", typ)
	}
	assert.Empty(t, rec.Find(typeNamespace, "keda"), "adopt mode must not own the keda namespace")
	wantReads := append([]string{components.KedaCRD}, components.AgentSandboxCRDs...)
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
			isOwnNamespace := r.Type == typeNamespace && r.Name == components.DefaultNamespace
			assert.True(t, isOwnNamespace || (hasNS && ns.IsString() && ns.StringValue() == components.DefaultNamespace),
				"%s %s is outside the stack's namespace", r.Type, r.Name)
		}
	}
	sort.Strings(gotReads)
	assert.Equal(t, wantReads, gotReads)
}

func TestEveryInClusterResourceUsesTheClusterProvider(t *testing.T) {
	modes := map[string]map[string]string{
		"create/install":  nil,
		"existing/adopt":  existingAdoptConfig,
		"runtime-create":  {"clusterMode": "existing", "kubeconfig": mockKubeconfig, "runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu"},
		"exporter-image":  {"exporterImage": "registry.example.com/claim-exporter:v1"},
		"existing/mixed1": {"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kedaMode": "adopt"},
	}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			rec := mustRunProgram(t, cfg)
			provider := mustFind(t, rec, typeK8sProvider, "cluster")
			count := 0
			for _, r := range rec.All() {
				if !strings.HasPrefix(r.Type, "kubernetes:") {
					continue
				}
				count++
				assert.Equal(t, provider.URN, r.ProviderURN("kubernetes"), "%s %s is not on the cluster's provider", r.Type, r.Name)
			}
			assert.Greater(t, count, 8)
		})
	}
}

func TestRuntimeClassCreateMode(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu"})
	rc := mustFind(t, rec, typeRuntimeClass, components.RuntimeClassName)
	assert.False(t, rc.Read)
	assert.Equal(t, "kata-qemu", inputStr(t, rc, "handler"))
	assert.Equal(t, components.RuntimeClassName, inputStr(t, rc, "metadata", "name"))
	ns := mustFind(t, rec, typeNamespace, components.DefaultNamespace)
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
		r.Absent[typeRuntimeClass+"/"+components.RuntimeClassName] = true
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "resource 'isolated-sandbox' does not exist")
	for _, typ := range []string{typeNamespace, typeTemplate, typePool, typeDeployment, typeScaledObject} {
		assert.Empty(t, rec.Find(typ, ""), "%s must not be registered when the runtime is missing", typ)
	}

	explained := componentError(t, typeRuntimeClass+"/"+components.RuntimeClassName, func(ctx *pulumi.Context) error {
		_, err := components.NewSandboxRuntime(ctx, "rt", &components.SandboxRuntimeArgs{Mode: components.ModeRequire, Name: components.RuntimeClassName})
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
		"keda": {components.KedaCRD, func(ctx *pulumi.Context) error {
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

func TestScaledObjectTargetsThePoolAndReadsTheExporter(t *testing.T) {
	rec := mustRunProgram(t, nil)
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	assert.Equal(t, "warm-pool", inputStr(t, so, "metadata", "name"))
	assert.Equal(t, components.DefaultNamespace, inputStr(t, so, "metadata", "namespace"))
	ref, _ := so.Path("spec", "scaleTargetRef")
	assert.Equal(t, map[string]any{
		"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool", "name": "warm-pool",
	}, plainValue(ref))
	assert.Equal(t, 1, inputInt(t, so, "spec", "minReplicaCount"))
	assert.Equal(t, 3, inputInt(t, so, "spec", "maxReplicaCount"))
	assert.Equal(t, 15, inputInt(t, so, "spec", "pollingInterval"))

	triggers, _ := so.Path("spec", "triggers")
	assert.Equal(t, []any{map[string]any{
		"type": "metrics-api", "metricType": "AverageValue",
		"metadata": map[string]any{
			"url":           "http://claim-exporter.warm-pool-autoscaling-keda.svc.cluster.local:8080/demand",
			"valueLocation": "active_claims", "targetValue": "1", "format": "json",
			// Above the exporter's 5s read bound: a slow API must reach KEDA as a stale count.
			"timeout": "8000",
		},
	}}, plainValue(triggers))

	behavior, _ := so.Path("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
	assert.Equal(t, map[string]any{
		"scaleUp": map[string]any{"stabilizationWindowSeconds": float64(0)},
		"scaleDown": map[string]any{
			"stabilizationWindowSeconds": float64(0),
			"policies":                   []any{map[string]any{"type": "Pods", "value": float64(3), "periodSeconds": float64(15)}},
		},
	}, plainValue(behavior))
	fallback, _ := so.Path("spec", "fallback")
	assert.Equal(t, map[string]any{"failureThreshold": float64(3), "replicas": float64(0), "behavior": "currentReplicasIfHigher"}, plainValue(fallback))
}

func TestScaledObjectFollowsConfig(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{
		"namespace": "pool-b", "poolName": "pool-b", "minReplicas": "0", "maxReplicas": "5", "loadCap": "4",
		"targetValue": "2", "activationTargetValue": "0.5", "pollingInterval": "7", "fallbackReplicas": "5",
		"exporterUrl": "http://127.0.0.1:18080/demand",
	})
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	assert.Equal(t, "pool-b", inputStr(t, so, "metadata", "namespace"))
	assert.Equal(t, "pool-b", inputStr(t, so, "spec", "scaleTargetRef", "name"))
	assert.Equal(t, 0, inputInt(t, so, "spec", "minReplicaCount"))
	assert.Equal(t, 5, inputInt(t, so, "spec", "maxReplicaCount"))
	assert.Equal(t, 7, inputInt(t, so, "spec", "pollingInterval"))
	assert.Equal(t, 5, inputInt(t, so, "spec", "fallback", "replicas"))
	triggers, _ := so.Path("spec", "triggers")
	meta := plainValue(triggers).([]any)[0].(map[string]any)["metadata"].(map[string]any)
	assert.Equal(t, "http://127.0.0.1:18080/demand", meta["url"])
	assert.Equal(t, "2", meta["targetValue"])
	assert.Equal(t, "0.5", meta["activationTargetValue"])
	policies, _ := so.Path("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleDown", "policies")
	assert.Equal(t, float64(5), plainValue(policies).([]any)[0].(map[string]any)["value"], "one step back to the floor from max")
	pool := mustFind(t, rec, typePool, "pool-b")
	assert.Equal(t, 0, inputInt(t, pool, "spec", "replicas"), "the pool starts at the floor")
}

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
	assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": "claim-exporter", "namespace": components.DefaultNamespace}}, plainValue(subjects))
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

func TestExporterRunsItsEmbeddedSourceByDefault(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"claimSelector": "team=a"})
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
	assert.Equal(t, components.ExporterGoImage, c["image"])
	assert.Equal(t, []any{"go", "run", "./exporter/cmd/claim-exporter"}, c["command"])
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

	ns := mustFind(t, rec, typeNamespace, components.DefaultNamespace)
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

func TestDestroyOrderFollowsDependencies(t *testing.T) {
	for name, cfg := range map[string]map[string]string{"install": nil, "adopt": existingAdoptConfig} {
		t.Run(name, func(t *testing.T) {
			rec := mustRunProgram(t, cfg)
			ns := mustFind(t, rec, typeNamespace, components.DefaultNamespace)
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
			}
			inNamespace := 0
			for _, r := range rec.All() {
				if v, ok := r.Path("metadata", "namespace"); ok && v.IsString() && v.StringValue() == components.DefaultNamespace {
					inNamespace++
					assert.True(t, r.DependsOn(ns), "%s %s must depend on the namespace", r.Type, r.Name)
				}
			}
			assert.GreaterOrEqual(t, inNamespace, 8)
		})
	}
}

func TestBadConfigFailsBeforeAnyResource(t *testing.T) {
	cases := map[string]struct {
		cfg  map[string]string
		want string
	}{
		"min above max":           {map[string]string{"minReplicas": "4", "maxReplicas": "3"}, "minReplicas (4) is greater than maxReplicas (3)"},
		"negative min":            {map[string]string{"minReplicas": "-1"}, "minReplicas is -1; it cannot be negative"},
		"zero max":                {map[string]string{"maxReplicas": "0", "minReplicas": "0", "loadCap": "0"}, "maxReplicas is 0; it must be at least 1"},
		"load cap above max":      {map[string]string{"loadCap": "4"}, "loadCap is 4; it must be between 1 and maxReplicas (3)"},
		"unknown cluster mode":    {map[string]string{"clusterMode": "borrow"}, `clusterMode is "borrow"; it must be one of create, existing`},
		"unknown runtime mode":    {map[string]string{"runtimeClassMode": "maybe"}, `runtimeClassMode is "maybe"; it must be one of require, create`},
		"unknown sandbox mode":    {map[string]string{"agentSandboxMode": "upgrade"}, `agentSandboxMode is "upgrade"; it must be one of install, adopt`},
		"unknown keda mode":       {map[string]string{"kedaMode": "upgrade"}, `kedaMode is "upgrade"; it must be one of install, adopt`},
		"old kubernetes":          {map[string]string{"kubernetesVersion": "1.35"}, "kubernetesVersion is 1.35, but the isolated-sandbox runtime (Nitro Sandboxes) needs Kubernetes 1.36 or newer"},
		"malformed kubernetes":    {map[string]string{"kubernetesVersion": "latest"}, `kubernetesVersion is "latest"; write it as MAJOR.MINOR`},
		"existing, no kubeconfig": {map[string]string{"clusterMode": "existing"}, "clusterMode=existing needs kubeconfig"},
		"existing, empty file":    {map[string]string{"clusterMode": "existing", "kubeconfig": "EMPTYFILE"}, "kubeconfig is empty"},
		"existing, missing file":  {map[string]string{"clusterMode": "existing", "kubeconfig": "/nonexistent/kubeconfig"}, `kubeconfig "/nonexistent/kubeconfig" cannot be read`},
		"unknown context":         {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "prod"}, `kubeContext "prod" does not appear in the kubeconfig`},
		"bad namespace":           {map[string]string{"namespace": "Warm_Pool"}, `namespace "Warm_Pool" is not a valid Kubernetes namespace name`},
		"bad pool name":           {map[string]string{"poolName": "pool!"}, `poolName "pool!" is not a valid Kubernetes object name`},
		"bad template name":       {map[string]string{"templateName": "-tpl"}, `templateName "-tpl" is not a valid Kubernetes object name`},
		"non-numeric target":      {map[string]string{"targetValue": "one"}, `targetValue is "one"; it must be a number greater than 0`},
		"zero target":             {map[string]string{"targetValue": "0"}, `targetValue is "0"; it must be a number greater than 0`},
		"non-numeric activation":  {map[string]string{"activationTargetValue": "some"}, `activationTargetValue is "some"`},
		"non-integer bound":       {map[string]string{"maxReplicas": "three"}, `maxReplicas is "three", which is not a whole number`},
		"adopt on a new cluster":  {map[string]string{"kedaMode": "adopt"}, "clusterMode=create makes a new, empty cluster"},
		"runtime without handler": {map[string]string{"runtimeClassMode": "create"}, "runtimeClassMode=create needs runtimeClassHandler"},
		"subnets without vpc":     {map[string]string{"privateSubnetIds": `["subnet-a","subnet-b"]`}, "privateSubnetIds/publicSubnetIds are set without vpcId"},
		"vpc with one subnet":     {map[string]string{"vpcId": "vpc-1", "privateSubnetIds": `["subnet-a"]`}, "privateSubnetIds has 1 subnet(s)"},
		"fallback above max":      {map[string]string{"fallbackReplicas": "9"}, "fallbackReplicas is 9"},
		"polling zero":            {map[string]string{"pollingInterval": "0"}, "pollingInterval is 0"},
		"relative exporter url":   {map[string]string{"exporterUrl": "claim-exporter:8080"}, `exporterUrl is "claim-exporter:8080"`},
		"bad cluster name":        {map[string]string{"clusterName": "my cluster"}, `clusterName "my cluster" is not a valid EKS cluster name`},
		"kubeconfig in create":    {map[string]string{"kubeconfig": mockKubeconfig}, "kubeconfig/kubeContext are only used with clusterMode=existing"},
		"negative headroom":       {map[string]string{"headroom": "-1"}, "headroom is -1; it must be between 0"},
		"headroom at max":         {map[string]string{"headroom": "3"}, "headroom is 3; it must be between 0 (one warm sandbox per targetValue claims, nothing more) and maxReplicas-1 (2)"},
		"headroom scale to zero":  {map[string]string{"headroom": "1", "minReplicas": "0"}, "headroom is 1 with minReplicas 0: the headroom keeps at least 1 warm sandboxes, so the pool can never scale to zero"},
		"non-integer headroom":    {map[string]string{"headroom": "2.5"}, `headroom is "2.5", which is not a whole number`},
	}
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := map[string]string{}
			for k, v := range c.cfg {
				if v == "EMPTYFILE" {
					v = empty
				}
				cfg[k] = v
			}
			rec, err := runProgram(t, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
}

// TestPulumiYamlMatchesTheProgram keeps the typed config block (what `pulumi config` and the CLI
// see) and the Go defaults (what unit tests and the inline e2e program see) in step.
func TestPulumiYamlMatchesTheProgram(t *testing.T) {
	proj, err := workspace.LoadProject("Pulumi.yaml")
	require.NoError(t, err, "Pulumi.yaml must pass the CLI's own schema validation")
	assert.Equal(t, "go", proj.Runtime.Name())
	assert.Equal(t, []any{"kubernetes"}, proj.Config["pulumi:disable-default-providers"].Value)

	t.Setenv("PULUMI_CONFIG", "{}")
	var cfg *components.Config
	require.NoError(t, pulumi.RunErr(func(ctx *pulumi.Context) (err error) {
		cfg, err = components.LoadConfig(ctx)
		return err
	}, mockgraph.New().Options(testProject, testStack)))

	goDefaults := map[string]any{
		"clusterMode": cfg.ClusterMode, "kubernetesVersion": cfg.KubernetesVersion, "vpcId": cfg.VpcID,
		"privateSubnetIds": len(cfg.PrivateSubnetIDs), "publicSubnetIds": len(cfg.PublicSubnetIDs),
		"kubeconfig": cfg.Kubeconfig, "kubeContext": cfg.KubeContext,
		"runtimeClassMode": cfg.RuntimeClassMode, "runtimeClassHandler": cfg.RuntimeClassHandler,
		"agentSandboxMode": cfg.AgentSandboxMode, "agentSandboxVersion": cfg.AgentSandboxVersion,
		"kedaMode": cfg.KedaMode, "kedaChartVersion": cfg.KedaChartVersion,
		"namespace": cfg.Namespace, "poolName": cfg.PoolName, "templateName": cfg.TemplateName,
		"minReplicas": cfg.MinReplicas, "maxReplicas": cfg.MaxReplicas, "targetValue": cfg.TargetValue,
		"activationTargetValue": cfg.ActivationTargetValue, "loadCap": cfg.LoadCap,
		"pollingInterval": cfg.PollingInterval, "fallbackReplicas": cfg.FallbackReplicas, "headroom": cfg.Headroom,
		"exporterImage": cfg.ExporterImage, "exporterUrl": cfg.ExporterURL, "claimSelector": cfg.ClaimSelector,
		// Computed when empty (<project>-<stack>); the declared default is the empty string.
		"clusterName": "",
	}
	for key, want := range goDefaults {
		declared, ok := proj.Config[key]
		if !assert.Truef(t, ok, "Pulumi.yaml does not declare %s", key) {
			continue
		}
		assert.NotNil(t, declared.Type, "%s has no type", key)
		assert.NotEmpty(t, declared.Description, "%s has no description", key)
		got := declared.Default
		switch d := got.(type) {
		case []any:
			got = len(d)
		case float64:
			got = int(d)
		}
		assert.Equalf(t, want, got, "default of %s: Go says %v, Pulumi.yaml says %v", key, want, declared.Default)
	}
	for key := range proj.Config {
		if !strings.Contains(key, ":") {
			_, known := goDefaults[key]
			assert.Truef(t, known, "Pulumi.yaml declares %s, which the program does not read", key)
		}
	}
}
