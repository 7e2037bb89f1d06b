package program

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

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
	rc := mustFind(t, rec, typeRuntimeClass, contract.RuntimeClassName)
	assert.True(t, rc.Read)
	assert.Equal(t, contract.RuntimeClassName, rc.ID)
}

func TestCreateModeWithAGivenVPCMakesNoNetwork(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"vpcId": "vpc-123", "privateSubnetIds": `["subnet-a","subnet-b"]`})
	for _, r := range rec.All() {
		assert.False(t, strings.HasPrefix(r.Type, "aws:ec2/"), "no network resource expected, found %s %s", r.Type, r.Name)
	}
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assert.Equal(t, "vpc-123", inputStr(t, eks, "vpcId"))
	v, _ := eks.Path("privateSubnetIds")
	assert.Equal(t, []any{"subnet-a", "subnet-b"}, plainValue(v))
	assertNoPublicSubnetsGiven(t, eks)
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
