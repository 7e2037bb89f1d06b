package program

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
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

// The transform sets the policy on pulumi-eks's aws:eks Cluster and on nothing else.
func TestUpgradePolicyTransformSetsOnlyTheEKSCluster(t *testing.T) {
	for _, policy := range []string{components.UpgradePolicyStandard, components.UpgradePolicyExtended} {
		tr := components.UpgradePolicyTransform(policy)
		res := tr(context.Background(), &pulumi.ResourceTransformArgs{Custom: true, Type: "aws:eks/cluster:Cluster", Name: "cluster-eksCluster",
			Props: pulumi.Map{"name": pulumi.String("c"), "version": pulumi.String("1.36")}})
		require.NotNil(t, res)
		assert.Equal(t, pulumi.Map{"supportType": pulumi.String(policy)}, res.Props["upgradePolicy"])
		assert.Equal(t, pulumi.String("1.36"), res.Props["version"], "the other inputs pass unchanged")
		for _, other := range []string{"aws:iam/role:Role", "aws:ec2/securityGroup:SecurityGroup", "eks:index:Cluster"} {
			assert.Nil(t, tr(context.Background(), &pulumi.ResourceTransformArgs{Type: other, Props: pulumi.Map{}}), "%s is left alone", other)
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
		"in existing mode": {withConfig(map[string]string{"endpointPublicAccessCidrs": `["203.0.113.0/24"]`, "tags": `{"team": "agents"}`, "upgradePolicy": "EXTENDED"}),
			"endpointPublicAccessCidrs, tags, upgradePolicy only apply to a cluster the stack creates"},
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
	}))
	require.NoError(t, err, "Pulumi.yaml's defaults beside an existing cluster")
}
