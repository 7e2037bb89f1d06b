package program

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/awscomponents"
	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// Create mode's defaults: both endpoints, the public one open as EKS opens it, the stack's tag on
// every AWS resource, the standard-support upgrade policy.
func TestCreateModeEndpointTagsAndUpgradePolicyDefaults(t *testing.T) {
	rec := mustRunProgram(t, nil)
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assert.True(t, inputBool(t, eks, "endpointPrivateAccess"), "the private endpoint is on by default")
	assert.True(t, inputBool(t, eks, "endpointPublicAccess"), "the public endpoint is on by default, so up works from a laptop")
	_, given := eks.Path("publicAccessCidrs")
	assert.False(t, given, "unset, the public endpoint's allow list is EKS's default")
	stack := testProject + "." + testStack
	assert.Equal(t, stack, inputStr(t, eks, "tags", contract.StackLabel))
	for _, typ := range []string{"aws:ec2/vpc:Vpc", typeSubnet, typeNatGateway, typeInternetGateway, typeRouteTable, "aws:ec2/eip:Eip"} {
		rs := rec.Find(typ, "")
		require.NotEmpty(t, rs, "the network has a %s", typ)
		for _, r := range rs {
			assert.Equal(t, stack, inputStr(t, r, "tags", contract.StackLabel), "%s %s carries the stack's tag", typ, r.Name)
			assert.NotEmpty(t, inputStr(t, r, "tags", "Name"), "%s %s keeps its Name", typ, r.Name)
		}
	}
	assert.Equal(t, 1, eks.Transforms, "the cluster carries the upgrade policy's transform")
	logs, _ := eks.Path("enabledClusterLogTypes")
	assert.Equal(t, []any{"api", "audit", "authenticator"}, plainValue(logs), "the audit trail is on by default")
}

// Without the private endpoint and with a restricted public one, the nodes reach the API server
// from the NAT gateway's address (EKS user guide, cluster endpoint access): the program's own NAT
// joins the list, after the team's blocks.
func TestCreateModeNATJoinsARestrictedPublicEndpointWithoutPrivateAccess(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"endpointPrivateAccess": "false", "endpointPublicAccessCidrs": `["203.0.113.0/24"]`})
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	cidrs, ok := eks.Path("publicAccessCidrs")
	require.True(t, ok)
	assert.Equal(t, []any{"203.0.113.0/24", mockgraph.MockElasticIP + "/32"}, plainValue(cidrs))
	eips := rec.Find("aws:ec2/eip:Eip", "")
	require.Len(t, eips, 1, "one NAT gateway, one address")

	// With the private endpoint on (the default), the list is the team's alone.
	rec = mustRunProgram(t, map[string]string{"endpointPublicAccessCidrs": `["203.0.113.0/24"]`})
	cidrs, _ = mustFind(t, rec, typeEksCluster, "cluster").Path("publicAccessCidrs")
	assert.Equal(t, []any{"203.0.113.0/24"}, plainValue(cidrs))
}

// The control-plane logs go to a log group of the stack's own, made before the cluster (so EKS does
// not make one that destroy would leave) with the retention and the tags; [] makes none.
func TestCreateModeControlPlaneLogGroupIsTheStacks(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"clusterLogRetentionDays": "30", "tags": `{"team": "agents"}`})
	groups := rec.Find("aws:cloudwatch/logGroup:LogGroup", "")
	require.Len(t, groups, 1)
	lg := groups[0]
	assert.Equal(t, "/aws/eks/"+testProject+"-"+testStack+"/cluster", inputStr(t, lg, "name"))
	assert.Equal(t, "/aws/eks/"+inputStr(t, mustFind(t, rec, typeEksCluster, "cluster"), "name")+"/cluster", inputStr(t, lg, "name"), "the group EKS writes to")
	assert.Equal(t, 30, inputInt(t, lg, "retentionInDays"))
	assert.Equal(t, "agents", inputStr(t, lg, "tags", "team"))
	assert.True(t, mustFind(t, rec, typeEksCluster, "cluster").DependsOn(lg), "the cluster waits for the group, and goes first on destroy")

	rec = mustRunProgram(t, map[string]string{"clusterLogTypes": "[]"})
	assert.Empty(t, rec.Find("aws:cloudwatch/logGroup:LogGroup", ""))
}

// A customer-managed key reaches the cluster; unset, EKS's default encryption stands (no input).
func TestCreateModeSecretsKmsKey(t *testing.T) {
	rec := mustRunProgram(t, nil)
	_, given := mustFind(t, rec, typeEksCluster, "cluster").Path("encryptionConfigKeyArn")
	assert.False(t, given, "unset: EKS's default envelope encryption")
	const key = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	rec = mustRunProgram(t, map[string]string{"secretsKmsKeyArn": key})
	assert.Equal(t, key, inputStr(t, mustFind(t, rec, typeEksCluster, "cluster"), "encryptionConfigKeyArn"))
}

// The log types reach the cluster as given; [] sends none.
func TestCreateModeClusterLogTypesFromConfig(t *testing.T) {
	for cfg, want := range map[string][]any{
		`["audit", "scheduler"]`: {"audit", "scheduler"},
		`[]`:                     {},
	} {
		rec := mustRunProgram(t, map[string]string{"clusterLogTypes": cfg})
		logs, _ := mustFind(t, rec, typeEksCluster, "cluster").Path("enabledClusterLogTypes")
		got := plainValue(logs)
		if got == nil {
			got = []any{}
		}
		assert.Equal(t, want, got, cfg)
	}
}

// Each key reaches the cluster; the tags reach every AWS resource beside the program's own.
func TestCreateModeEndpointTagsAndUpgradePolicyFromConfig(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{
		"endpointPublicAccessCidrs": `["203.0.113.0/24", "198.51.100.7/32"]`,
		"tags":                      `{"team": "agents", "cost-center": "4711", "owner": "Zoë Müller @ platform/agents", "note": "` + strings.Repeat("ü", 256) + `"}`,
		"upgradePolicy":             components.UpgradePolicyExtended,
		"adminPrincipalArns":        `["` + adminRole + `"]`,
	})
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	cidrs, ok := eks.Path("publicAccessCidrs")
	require.True(t, ok)
	assert.Equal(t, []any{"203.0.113.0/24", "198.51.100.7/32"}, plainValue(cidrs))
	assert.Equal(t, "agents", inputStr(t, eks, "tags", "team"))
	assert.Equal(t, "4711", inputStr(t, eks, "accessEntries", "admin-123456789012-role-platformadmin", "tags", "cost-center"))
	for _, r := range rec.Find(typeSubnet, "") {
		assert.Equal(t, "agents", inputStr(t, r, "tags", "team"), "subnet %s", r.Name)
		assert.NotEmpty(t, inputStr(t, r, "tags", "kubernetes.io/cluster/"+testProject+"-"+testStack), "subnet %s keeps the cluster's tag", r.Name)
	}

	// Private only: the public endpoint off, no allow list.
	rec = mustRunProgram(t, map[string]string{"endpointPublicAccess": "false"})
	eks = mustFind(t, rec, typeEksCluster, "cluster")
	assert.False(t, inputBool(t, eks, "endpointPublicAccess"))
	assert.True(t, inputBool(t, eks, "endpointPrivateAccess"))
}

// The transform sets the policy, and protect when asked, on pulumi-eks's aws:eks Cluster and on
// nothing else.
func TestEKSClusterTransformSetsOnlyTheEKSCluster(t *testing.T) {
	for _, policy := range []string{components.UpgradePolicyStandard, components.UpgradePolicyExtended} {
		for _, protect := range []bool{false, true} {
			tr := awscomponents.EKSClusterTransform(policy, protect)
			res := tr(context.Background(), &pulumi.ResourceTransformArgs{Custom: true, Type: "aws:eks/cluster:Cluster", Name: "cluster-eksCluster",
				Props: pulumi.Map{"name": pulumi.String("c"), "version": pulumi.String("1.36")}, Opts: pulumi.ResourceOptions{IgnoreChanges: []string{"x"}}})
			require.NotNil(t, res)
			assert.Equal(t, pulumi.Map{"supportType": pulumi.String(policy)}, res.Props["upgradePolicy"])
			assert.Equal(t, pulumi.String("1.36"), res.Props["version"], "the other inputs pass unchanged")
			assert.Equal(t, protect, res.Opts.Protect, "deletionProtection %v", protect)
			assert.Equal(t, []string{"x"}, res.Opts.IgnoreChanges, "the other options pass unchanged")
			for _, other := range []string{"aws:iam/role:Role", "aws:ec2/securityGroup:SecurityGroup", "eks:index:Cluster"} {
				assert.Nil(t, tr(context.Background(), &pulumi.ResourceTransformArgs{Type: other, Props: pulumi.Map{}}), "%s is left alone (not protected)", other)
			}
		}
	}
}

// What EKS or AWS refuses, or what would allow nothing, fails preview naming the key; in existing
// mode the keys are refused, Pulumi.yaml's defaults passing.
func TestCreateModeEndpointTagsAndUpgradePolicyRejected(t *testing.T) {
	many := make([]string, components.MaxPublicAccessCidrs+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"203.0.%d.0/24"`, i)
	}
	for name, c := range map[string]struct {
		cfg  map[string]string
		want string
	}{
		"no endpoint":             {map[string]string{"endpointPrivateAccess": "false", "endpointPublicAccess": "false"}, "endpointPrivateAccess and endpointPublicAccess are both false"},
		"a list with it off":      {map[string]string{"endpointPublicAccess": "false", "endpointPublicAccessCidrs": `["203.0.113.0/24"]`}, "endpointPublicAccessCidrs is set but endpointPublicAccess is false"},
		"not a CIDR":              {map[string]string{"endpointPublicAccessCidrs": `["203.0.113.7"]`}, `endpointPublicAccessCidrs has "203.0.113.7", which is not a CIDR block`},
		"host bits":               {map[string]string{"endpointPublicAccessCidrs": `["203.0.113.7/24"]`}, "write the network, 203.0.113.0/24"},
		"a private range":         {map[string]string{"endpointPublicAccessCidrs": `["10.0.0.0/8"]`}, `"10.0.0.0/8", a private range`},
		"IPv6":                    {map[string]string{"endpointPublicAccessCidrs": `["2001:db8::/32"]`}, "IPv4 CIDR blocks only"},
		"twice":                   {map[string]string{"endpointPublicAccessCidrs": `["203.0.113.0/24", "203.0.113.0/24"]`}, `lists "203.0.113.0/24" twice`},
		"over EKS's quota":        {map[string]string{"endpointPublicAccessCidrs": "[" + strings.Join(many, ",") + "]"}, "endpointPublicAccessCidrs has 41 blocks; EKS allows 40"},
		"not a boolean":           {map[string]string{"endpointPrivateAccess": "yes please"}, `endpointPrivateAccess is "yes please"; it must be true or false`},
		"an aws: tag":             {map[string]string{"tags": `{"aws:owner": "x"}`}, "tags.aws:owner: the aws: prefix is reserved"},
		"the program's Name":      {map[string]string{"tags": `{"Name": "x"}`}, "tags.Name is a tag the program sets itself"},
		"a long tag value":        {map[string]string{"tags": `{"team": "` + strings.Repeat("x", 257) + `"}`}, "tags.team has a value of 257 characters"},
		"a tag that is a list":    {map[string]string{"tags": `{"team": ["a"]}`}, "tags.team is [a], which is not a string"},
		"a character IAM refuses": {map[string]string{"tags": `{"team": "agents#1"}`}, `tags.team = "agents#1" has a character IAM refuses`},
		"an unknown policy":       {map[string]string{"upgradePolicy": "LTS"}, `upgradePolicy is "LTS"; it must be STANDARD`},
		"shared address space":    {map[string]string{"endpointPublicAccessCidrs": `["100.64.0.0/16"]`}, `endpointPublicAccessCidrs has "100.64.0.0/16", inside 100.64.0.0/10, the shared address space of carrier-grade NAT`},
		"benchmarking range":      {map[string]string{"endpointPublicAccessCidrs": `["198.18.0.0/15"]`}, `inside 198.18.0.0/15, the benchmarking range`},
		"multicast":               {map[string]string{"endpointPublicAccessCidrs": `["224.0.0.1/32"]`}, `inside 224.0.0.0/4, multicast`},
		"private off, own VPC": {map[string]string{"endpointPrivateAccess": "false", "endpointPublicAccessCidrs": `["203.0.113.0/24"]`,
			"vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": `["subnet-0a", "subnet-0b"]`},
			"endpointPrivateAccess is false and endpointPublicAccessCidrs restricts the public endpoint, with the VPC vpc-0123456789abcdef0 of your own"},
		"40 blocks and the NAT": {map[string]string{"endpointPrivateAccess": "false", "endpointPublicAccessCidrs": "[" + strings.Join(many[:40], ",") + "]"},
			"endpointPublicAccessCidrs has 40 blocks; EKS allows 40 per cluster, and the program adds its NAT gateway's address (endpointPrivateAccess is false), so give at most 39"},
		"39 blocks and a NAT per zone": {map[string]string{"endpointPrivateAccess": "false", "natGatewayPerZone": "true", "endpointPublicAccessCidrs": "[" + strings.Join(many[:39], ",") + "]"},
			"endpointPublicAccessCidrs has 39 blocks; EKS allows 40 per cluster, and the program adds its 2 NAT gateways' addresses (endpointPrivateAccess is false, natGatewayPerZone is true), so give at most 38"},
		"a NAT per zone in your own VPC": {map[string]string{"natGatewayPerZone": "true", "vpcId": "vpc-0123456789abcdef0", "privateSubnetIds": `["subnet-0a", "subnet-0b"]`},
			"natGatewayPerZone gives the stack's own network a NAT gateway per zone, but vpcId vpc-0123456789abcdef0 is a VPC of your own"},
		"deletion protection not a boolean": {map[string]string{"deletionProtection": "always"}, `deletionProtection is "always"; it must be true or false`},
		"an unknown log type":               {map[string]string{"clusterLogTypes": `["api", "kubelet"]`}, `clusterLogTypes has "kubelet"; EKS's control-plane log types are api, audit, authenticator, controllerManager, scheduler`},
		"a log type twice":                  {map[string]string{"clusterLogTypes": `["api", "api"]`}, `clusterLogTypes lists "api" twice`},
		"a key that is not a KMS ARN":       {map[string]string{"secretsKmsKeyArn": "arn:aws:iam::123456789012:role/x"}, `secretsKmsKeyArn is "arn:aws:iam::123456789012:role/x"; give the ARN of a symmetric KMS key`},
		"a retention CloudWatch refuses":    {map[string]string{"clusterLogRetentionDays": "100"}, "clusterLogRetentionDays is 100; CloudWatch Logs keeps a group for one of [1 3 5"},
		"in existing mode": {withConfig(map[string]string{"endpointPublicAccessCidrs": `["203.0.113.0/24"]`, "tags": `{"team": "agents"}`, "upgradePolicy": "EXTENDED", "clusterLogTypes": `["api"]`, "secretsKmsKeyArn": "arn:aws:kms:us-west-2:123456789012:alias/eks",
			"natGatewayPerZone": "true", "deletionProtection": "true"}),
			"endpointPublicAccessCidrs, tags, upgradePolicy, clusterLogTypes, secretsKmsKeyArn, natGatewayPerZone, deletionProtection only apply to a cluster the stack creates"},
	} {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
	_, err := runProgram(t, withConfig(map[string]string{
		"endpointPrivateAccess": "true", "endpointPublicAccess": "true", "endpointPublicAccessCidrs": "[]", "tags": "{}", "upgradePolicy": "STANDARD",
		"clusterLogTypes": `["api", "audit", "authenticator"]`, "secretsKmsKeyArn": "", "natGatewayPerZone": "false", "deletionProtection": "false",
	}))
	require.NoError(t, err, "Pulumi.yaml's defaults beside an existing cluster")
	// A block around the shared address space holds public addresses too: accepted.
	_, err = runProgram(t, map[string]string{"endpointPublicAccessCidrs": `["100.0.0.0/8"]`})
	require.NoError(t, err, "100.0.0.0/8 holds public addresses beside the shared space")
}
