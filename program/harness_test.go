package program

// The program's tests run it whole under Pulumi mocks (mockgraph) and read the
// resource graph it registered; these are the helpers they share.

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/awscomponents"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
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
	typeNodeClass    = "kubernetes:eks.amazonaws.com/v1:NodeClass"
	typeNodePool     = "kubernetes:karpenter.sh/v1:NodePool"
	typeRolePolicy   = "aws:iam/rolePolicy:RolePolicy"
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
	rec := mockgraph.New()
	t.Cleanup(rec.Close)
	for _, p := range prepare {
		p(rec)
	}
	return rec, runProgramOn(t, rec, cfg)
}

// runProgramOn is runProgram on a recorder the test made (to know its registry's address first).
func runProgramOn(t *testing.T, rec *mockgraph.Recorder, cfg map[string]string) error {
	t.Helper()
	full := map[string]string{}
	for k, v := range cfg {
		full[testProject+":"+k] = v
	}
	b, err := json.Marshal(full)
	require.NoError(t, err)
	t.Setenv("PULUMI_CONFIG", string(b))
	// Program: the recorder stands in for the cluster IAM role pulumi-eks makes (mockgraph).
	// awsprogram.Run, which imports this package, is Run on awscomponents.AWS.
	return pulumi.RunErr(rec.Program(runOnAWS), rec.Options(testProject, testStack))
}

// runOnAWS is the program as `pulumi up` runs it (awsprogram.Run).
func runOnAWS(ctx *pulumi.Context) error { return Run(ctx, awscomponents.AWS{}) }

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
