package program

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

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
		"unknown isolation":       {map[string]string{"isolation": "kvm"}, `isolation is "kvm"; it must be one of vm, gvisor`},
		"old kubernetes":          {map[string]string{"kubernetesVersion": "1.35"}, "kubernetesVersion is 1.35, but the isolated-sandbox runtime (Nitro Sandboxes) needs Kubernetes 1.36 or newer"},
		"malformed kubernetes":    {map[string]string{"kubernetesVersion": "latest"}, `kubernetesVersion is "latest"; write it as MAJOR.MINOR`},
		"existing, no kubeconfig": {map[string]string{"clusterMode": "existing"}, "clusterMode=existing needs kubeconfig"},
		"existing, empty file":    {map[string]string{"clusterMode": "existing", "kubeconfig": "EMPTYFILE"}, "kubeconfig is empty"},
		"existing, missing file":  {map[string]string{"clusterMode": "existing", "kubeconfig": "/nonexistent/kubeconfig"}, `kubeconfig "/nonexistent/kubeconfig" cannot be read`},
		"unknown context":         {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "prod"}, `kubeContext "prod" is not a context of the kubeconfig`},
		"context is a substring":  {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "abc"}, `kubeContext "abc" is not a context of the kubeconfig`},
		"empty mode":              {map[string]string{"kedaMode": ""}, "kedaMode is set to an empty value"},
		"blank version":           {map[string]string{"agentSandboxVersion": " "}, "agentSandboxVersion is set to an empty value"},
		"empty target":            {map[string]string{"targetValue": ""}, "targetValue is set to an empty value"},
		"selector grammar":        {map[string]string{"claimSelector": "a in b"}, `claimSelector "a in b" is not a Kubernetes label selector`},
		"chart version range":     {map[string]string{"kedaChartVersion": "2.21.x"}, `kedaChartVersion is "2.21.x"; pin an exact chart version`},
		"sandbox version v":       {map[string]string{"agentSandboxVersion": "vlatest"}, `agentSandboxVersion is "vlatest"`},
		"NaN target":              {map[string]string{"targetValue": "NaN"}, `targetValue is "NaN"`},
		"Inf activation":          {map[string]string{"activationTargetValue": "Inf", "minReplicas": "0"}, `activationTargetValue is "Inf"`},
		"activation with a floor": {map[string]string{"activationTargetValue": "1"}, "with a floor above 0 it does nothing"},
		"shared namespace":        {map[string]string{"namespace": "keda"}, `namespace "keda" belongs to Kubernetes or a shared install`},
		"system namespace":        {map[string]string{"namespace": "kube-system"}, `namespace "kube-system" belongs to Kubernetes or a shared install`},
		"bad namespace":           {map[string]string{"namespace": "Warm_Pool"}, `namespace "Warm_Pool" is not a valid Kubernetes namespace name`},
		"bad pool name":           {map[string]string{"poolName": "pool!"}, `poolName "pool!" is not a valid Kubernetes object name`},
		"bad template name":       {map[string]string{"templateName": "-tpl"}, `templateName "-tpl" is not a valid Kubernetes object name`},
		"non-numeric target":      {map[string]string{"targetValue": "one"}, `targetValue is "one"; it must be a number greater than 0`},
		"zero target":             {map[string]string{"targetValue": "0"}, `targetValue is "0"; it must be a number greater than 0`},
		"non-numeric activation":  {map[string]string{"activationTargetValue": "some"}, `activationTargetValue is "some"`},
		"non-integer bound":       {map[string]string{"maxReplicas": "three"}, `maxReplicas is "three", which is not a whole number`},
		"adopt on a new cluster":  {map[string]string{"kedaMode": "adopt"}, "clusterMode=create makes a new, empty cluster"},
		"runtime without handler": {map[string]string{"runtimeClassMode": "create"}, "runtimeClassMode=create needs runtimeClassHandler"},
		"subnets without vpc":     {map[string]string{"privateSubnetIds": `["subnet-a","subnet-b"]`}, "privateSubnetIds is set without vpcId"},
		"public subnets":          {map[string]string{"vpcId": "vpc-1", "privateSubnetIds": `["subnet-a","subnet-b"]`, "publicSubnetIds": `["subnet-c"]`}, "publicSubnetIds is no longer used"},
		"admin not an arn":        {map[string]string{"adminPrincipalArns": `["alice"]`}, `adminPrincipalArns has "alice", which is not an IAM role or user ARN`},
		"admin session arn":       {map[string]string{"adminPrincipalArns": `["arn:aws:sts::123456789012:assumed-role/Admin/alice"]`}, "an STS session ARN (what `aws sts get-caller-identity` prints); access entries take the role itself: arn:aws:iam::123456789012:role/Admin"},
		"admin short account":     {map[string]string{"adminPrincipalArns": `["arn:aws:iam::1234:role/Admin"]`}, `adminPrincipalArns has "arn:aws:iam::1234:role/Admin"`},
		"admin group":             {map[string]string{"adminPrincipalArns": `["arn:aws:iam::123456789012:group/Admins"]`}, "not an IAM role or user ARN"},
		"admin twice":             {map[string]string{"adminPrincipalArns": `["arn:aws:iam::123456789012:role/Admin","arn:aws:iam::123456789012:role/Admin"]`}, "lists \"arn:aws:iam::123456789012:role/Admin\" twice"},
		"preview not an arn":      {map[string]string{"previewPrincipalArn": "role/Preview"}, `previewPrincipalArn has "role/Preview"`},
		"preview is an admin":     {map[string]string{"adminPrincipalArns": `["arn:aws:iam::123456789012:role/CI"]`, "previewPrincipalArn": "arn:aws:iam::123456789012:role/CI"}, "is also in adminPrincipalArns"},
		"access on existing":      {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "previewPrincipalArn": "arn:aws:iam::123456789012:role/Preview"}, "adminPrincipalArns/previewPrincipalArn create EKS access entries with a cluster the stack creates"},
		"vpc with one subnet":     {map[string]string{"vpcId": "vpc-1", "privateSubnetIds": `["subnet-a"]`}, "privateSubnetIds has 1 subnet(s)"},
		"fallback above max":      {map[string]string{"fallbackReplicas": "9"}, "fallbackReplicas is 9"},
		"negative headroom":       {map[string]string{"headroom": "-1"}, "headroom is -1; it must be between 0"},
		"headroom at max":         {map[string]string{"headroom": "3"}, "headroom is 3; it must be between 0 (one warm sandbox per targetValue claims, nothing more) and maxReplicas-1 (2)"},
		"headroom scale to zero":  {map[string]string{"headroom": "1", "minReplicas": "0"}, "headroom is 1 with minReplicas 0: the headroom keeps at least 1 warm sandboxes, so the pool can never scale to zero"},
		"non-integer headroom":    {map[string]string{"headroom": "2.5"}, `headroom is "2.5", which is not a whole number`},
		"polling zero":            {map[string]string{"pollingInterval": "0"}, "pollingInterval is 0"},
		"relative exporter url":   {map[string]string{"exporterUrl": "claim-exporter:8080"}, `exporterUrl is "claim-exporter:8080"`},
		"bad cluster name":        {map[string]string{"clusterName": "my cluster"}, `clusterName "my cluster" is not a valid EKS cluster name`},
		"kubeconfig in create":    {map[string]string{"kubeconfig": mockKubeconfig}, "kubeconfig/kubeContext are only used with clusterMode=existing"},
		"image grammar":           {map[string]string{"exporterImage": "UPPER::"}, `exporterImage "UPPER::" is not an image reference`},
		"version on existing":     {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubernetesVersion": "1.37"}, `kubernetesVersion is "1.37", but it is only used with clusterMode=create`},
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
	proj, err := workspace.LoadProject("../Pulumi.yaml")
	require.NoError(t, err, "Pulumi.yaml must pass the CLI's own schema validation")
	assert.Equal(t, "go", proj.Runtime.Name())
	assert.Equal(t, []any{"kubernetes"}, proj.Config["pulumi:disable-default-providers"].Value)

	t.Setenv("PULUMI_CONFIG", "{}")
	var cfg *Config
	require.NoError(t, pulumi.RunErr(func(ctx *pulumi.Context) (err error) {
		cfg, err = LoadConfig(ctx)
		return err
	}, mockgraph.New().Options(testProject, testStack)))

	goDefaults := map[string]any{
		"clusterMode": cfg.ClusterMode, "kubernetesVersion": cfg.KubernetesVersion, "vpcId": cfg.VpcID,
		"privateSubnetIds":   len(cfg.PrivateSubnetIDs),
		"adminPrincipalArns": len(cfg.AdminPrincipalArns), "previewPrincipalArn": cfg.PreviewPrincipalArn,
		"endpointPrivateAccess": cfg.EndpointPrivateAccess, "endpointPublicAccess": cfg.EndpointPublicAccess,
		"endpointPublicAccessCidrs": len(cfg.EndpointPublicAccessCidrs), "tags": map[string]any{}, "upgradePolicy": cfg.UpgradePolicy,
		"clusterLogTypes": len(cfg.ClusterLogTypes), "clusterLogRetentionDays": cfg.ClusterLogRetentionDays,
		"secretsKmsKeyArn": cfg.SecretsKmsKeyArn, "natGatewayPerZone": cfg.NatGatewayPerZone, "deletionProtection": cfg.DeletionProtection,
		"sandboxNodePool": cfg.SandboxNodePool, "sandboxNodeCpu": cfg.SandboxNodeCPU,
		// Declared only so that setting it reaches the program's explanation; any value is refused.
		"publicSubnetIds": 0,
		"kubeconfig":      cfg.Kubeconfig, "kubeContext": cfg.KubeContext,
		"runtimeClassMode": cfg.RuntimeClassMode, "runtimeClassHandler": cfg.RuntimeClassHandler,
		"agentSandboxMode": cfg.AgentSandboxMode, "agentSandboxVersion": cfg.AgentSandboxVersion,
		"kedaMode": cfg.KedaMode, "kedaChartVersion": cfg.KedaChartVersion,
		"namespace": cfg.Namespace, "poolName": cfg.PoolName, "templateName": cfg.TemplateName,
		"minReplicas": cfg.MinReplicas, "maxReplicas": cfg.MaxReplicas, "targetValue": cfg.TargetValue,
		"activationTargetValue": cfg.ActivationTargetValue, "loadCap": cfg.LoadCap,
		"pollingInterval": cfg.PollingInterval, "fallbackReplicas": cfg.FallbackReplicas, "headroom": cfg.Headroom,
		"exporterImage": cfg.ExporterImage, "exporterImageRepository": cfg.ExporterImageRepository, "exporterImagePlatform": cfg.ExporterImagePlatform,
		"exporterReplicas": cfg.ExporterReplicas, "exporterUrl": cfg.ExporterURL, "claimSelector": cfg.ClaimSelector,
		"isolation": cfg.Isolation,
		// Computed when empty (<project>-<stack>); the declared default is the empty string.
		"clusterName": "",
		// Structured keys: empty means the placeholder agent, the claims policy, one pool.
		"template": map[string]any{}, "sizing": map[string]any{}, "pools": 0,
		// Empty: the program's production defaults for KEDA's install (program/kedaconfig.go).
		"keda": map[string]any{},
		// Empty: the production scale-down behaviour (components.DefaultScaleDown).
		"scaleDown": map[string]any{},
		// Empty: any rise in one sync (components.DefaultScaleUp).
		"scaleUp": map[string]any{},
		// Empty: no ServiceMonitor, no rules (program/monitoringconfig.go).
		"monitoring": map[string]any{},
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
	// A list default is compared by length above; the log types are compared whole.
	assert.Equal(t, []any{"api", "audit", "authenticator"}, proj.Config["clusterLogTypes"].Default)
	assert.Equal(t, []string{"api", "audit", "authenticator"}, cfg.ClusterLogTypes)
	for key := range proj.Config {
		if !strings.Contains(key, ":") {
			_, known := goDefaults[key]
			assert.Truef(t, known, "Pulumi.yaml declares %s, which the program does not read", key)
		}
	}
}
