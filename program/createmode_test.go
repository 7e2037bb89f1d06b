package program

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// Create mode as a platform team runs it: who may reach the cluster, where the nodes go, and the
// order destroy takes. The AWS side cannot run here; these assert the graph the program registers.

const (
	typeSubnet           = "aws:ec2/subnet:Subnet"
	typeRouteTable       = "aws:ec2/routeTable:RouteTable"
	typeRouteTableAssoc  = "aws:ec2/routeTableAssociation:RouteTableAssociation"
	typeNatGateway       = "aws:ec2/natGateway:NatGateway"
	typeInternetGateway  = "aws:ec2/internetGateway:InternetGateway"
	typeClusterRole      = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
	typeClusterRoleBind  = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
	adminRole            = "arn:aws:iam::123456789012:role/PlatformAdmin"
	adminUser            = "arn:aws:iam::123456789012:user/ops/alice"
	previewRole          = "arn:aws:iam::123456789012:role/github-preview"
	clusterAdminPolicy   = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
	previewClusterRoleNm = contract.DefaultNamespace + "-preview"
)

var platformConfig = map[string]string{
	"adminPrincipalArns":  `["` + adminRole + `","` + adminUser + `"]`,
	"previewPrincipalArn": previewRole,
}

// assertNoPublicSubnetsGiven: pulumi-eks hands subnetIds, or publicSubnetIds + privateSubnetIds, to
// the cluster's VPC config, and Auto Mode's built-in NodeClass launches nodes in those subnets.
func assertNoPublicSubnetsGiven(t *testing.T, eks mockgraph.Resource) {
	t.Helper()
	for _, key := range []string{"publicSubnetIds", "subnetIds", "nodeSubnetIds"} {
		_, given := eks.Path(key)
		assert.False(t, given, "the cluster must not be given %s: Auto Mode could launch nodes there", key)
	}
}

func TestCreateModeNodesLandOnlyInPrivateSubnets(t *testing.T) {
	rec := mustRunProgram(t, nil)
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	assertNoPublicSubnetsGiven(t, eks)

	given, ok := eks.Path("privateSubnetIds")
	require.True(t, ok, "the cluster gets its subnets as privateSubnetIds")
	var ids []string
	for _, v := range plainValue(given).([]any) {
		ids = append(ids, v.(string))
	}
	// Every subnet the cluster gets is one of ours without public IPs and routed through the NAT
	// gateway, never the internet gateway.
	privateRoutes := mustFind(t, rec, typeRouteTable, "cluster-private")
	routes, _ := privateRoutes.Path("routes")
	for _, r := range plainValue(routes).([]any) {
		route := r.(map[string]any)
		assert.NotEmpty(t, route["natGatewayId"], "the private route out is the NAT gateway")
		assert.Empty(t, route["gatewayId"], "a private subnet has no internet gateway route")
	}
	subnetsByID := map[string]mockgraph.Resource{}
	for _, s := range rec.Find(typeSubnet, "") {
		subnetsByID[s.Name+"-id"] = s
	}
	require.Len(t, ids, 2)
	for _, id := range ids {
		s, found := subnetsByID[id]
		require.Truef(t, found, "the cluster's subnet %s is not one the program made", id)
		assert.Equal(t, "1", inputStr(t, s, "tags", "kubernetes.io/role/internal-elb"), "%s is private", s.Name)
		if v, set := s.Path("mapPublicIpOnLaunch"); set {
			assert.False(t, v.BoolValue(), "%s must not give public IPs", s.Name)
		}
		var associatedWith string
		for _, a := range rec.Find(typeRouteTableAssoc, "") {
			if inputStr(t, a, "subnetId") == id {
				associatedWith = inputStr(t, a, "routeTableId")
			}
		}
		assert.Equal(t, "cluster-private-id", associatedWith, "%s routes through the private route table", s.Name)
	}
}

func TestAccessEntriesAreCreatedWithTheCluster(t *testing.T) {
	t.Run("none configured", func(t *testing.T) {
		rec := mustRunProgram(t, nil)
		eks := mustFind(t, rec, typeEksCluster, "cluster")
		entries, _ := eks.Path("accessEntries")
		assert.Empty(t, plainValue(entries), "only the creator has access when nobody is named")
		assert.Empty(t, rec.Find(typeClusterRole, ""))
	})

	rec := mustRunProgram(t, platformConfig)
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	entries, ok := eks.Path("accessEntries")
	require.True(t, ok)
	// Each entry carries the stack's tags, like every AWS resource of the stack.
	stackTags := map[string]any{contract.StackLabel: testProject + "." + testStack}
	adminEntry := func(arn string) map[string]any {
		return map[string]any{
			"principalArn": arn, "tags": stackTags,
			"accessPolicies": map[string]any{"cluster-admin": map[string]any{
				"policyArn": clusterAdminPolicy, "accessScope": map[string]any{"type": "cluster"},
			}},
		}
	}
	assert.Equal(t, map[string]any{
		"admin-123456789012-role-platformadmin": adminEntry(adminRole),
		"admin-123456789012-user-alice":         adminEntry(adminUser),
		// The preview principal: no EKS access policy, only the group the stack's RBAC binds.
		"preview-123456789012-role-github-preview": map[string]any{
			"principalArn": previewRole, "kubernetesGroups": []any{components.PreviewGroup}, "tags": stackTags,
		},
	}, plainValue(entries))
}

func TestPreviewPrincipalGetsOnlyWhatAPreviewReads(t *testing.T) {
	rec := mustRunProgram(t, platformConfig)
	group := []any{map[string]any{"kind": "Group", "name": components.PreviewGroup, "apiGroup": "rbac.authorization.k8s.io"}}

	cr := mustFind(t, rec, typeClusterRole, "preview-access")
	assert.Equal(t, previewClusterRoleNm, inputStr(t, cr, "metadata", "name"))
	rules, _ := cr.Path("rules")
	crds := append([]any{contract.ScaledObjectCRD}, toAny(contract.AgentSandboxCRDs)...)
	assert.Equal(t, []any{
		map[string]any{"apiGroups": []any{"node.k8s.io"}, "resources": []any{"runtimeclasses"}, "resourceNames": []any{contract.RuntimeClassName}, "verbs": []any{"get"}},
		map[string]any{"apiGroups": []any{"apiextensions.k8s.io"}, "resources": []any{"customresourcedefinitions"}, "resourceNames": crds, "verbs": []any{"get"}},
		map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "resourceNames": []any{contract.DefaultNamespace, contract.KedaNamespace}, "verbs": []any{"get"}},
		// The stack's own NodeClass and NodePool, which a refresh reads.
		map[string]any{"apiGroups": []any{"eks.amazonaws.com"}, "resources": []any{"nodeclasses"}, "resourceNames": []any{contract.SandboxNodeClassName}, "verbs": []any{"get"}},
		map[string]any{"apiGroups": []any{"karpenter.sh"}, "resources": []any{"nodepools"}, "resourceNames": []any{contract.SandboxNodePoolName}, "verbs": []any{"get"}},
	}, plainValue(rules))
	crb := mustFind(t, rec, typeClusterRoleBind, "preview-access")
	assert.Equal(t, previewClusterRoleNm, inputStr(t, crb, "roleRef", "name"))
	subjects, _ := crb.Path("subjects")
	assert.Equal(t, group, plainValue(subjects))

	role := mustFind(t, rec, typeRole, "preview-access")
	assert.Equal(t, contract.DefaultNamespace, inputStr(t, role, "metadata", "namespace"))
	nsRules, _ := role.Path("rules")
	var resources []string
	for _, r := range plainValue(nsRules).([]any) {
		rule := r.(map[string]any)
		assert.Equal(t, []any{"get"}, rule["verbs"], "the preview role only reads")
		for _, res := range rule["resources"].([]any) {
			resources = append(resources, res.(string))
		}
	}
	sort.Strings(resources)
	// Exactly the kinds the stack manages in its namespace; no Secrets.
	assert.Equal(t, []string{"configmaps", "deployments", "rolebindings", "roles", "sandboxtemplates", "sandboxwarmpools", "scaledobjects", "serviceaccounts", "services"}, resources)
	rb := mustFind(t, rec, typeRoleBinding, "preview-access")
	assert.Equal(t, "Role", inputStr(t, rb, "roleRef", "kind"))
	subjects, _ = rb.Path("subjects")
	assert.Equal(t, group, plainValue(subjects))
	ns := mustFind(t, rec, typeNamespace, contract.DefaultNamespace)
	assert.True(t, role.DependsOn(ns) && rb.DependsOn(ns), "the preview Role lives in (and goes before) the namespace")
}

// TestCreateModeDestroyOrder: Pulumi deletes a resource only after everything that depends on it.
// In create mode that means: the stack's namespace (and every object in it) before KEDA and
// agent-sandbox, all in-cluster objects before the cluster's provider, the provider before the
// cluster, and the cluster (its nodes and their network interfaces) before the network's way out.
func TestCreateModeDestroyOrder(t *testing.T) {
	rec := mustRunProgram(t, platformConfig)
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	provider := mustFind(t, rec, typeK8sProvider, "cluster")
	assert.True(t, provider.DependsOn(eks), "the Kubernetes provider is made from the cluster's kubeconfig")

	for _, typ := range []string{typeNatGateway, typeInternetGateway, typeRouteTable, typeRouteTableAssoc, "aws:ec2/eip:Eip"} {
		found := rec.Find(typ, "")
		require.NotEmpty(t, found, typ)
		for _, r := range found {
			assert.True(t, eks.DependsOn(r), "the cluster must depend on %s %s: created before it, deleted after it", r.Type, r.Name)
		}
	}
	for _, s := range rec.Find(typeSubnet, "") {
		if strings.Contains(s.Name, "public") {
			assert.True(t, eks.DependsOn(s), "the NAT gateway's public subnet outlives the cluster")
		}
	}

	namespaceDependsOnTheInstalls(t, rec, true)
	for _, r := range rec.All() {
		if strings.HasPrefix(r.Type, "kubernetes:") && !r.Read {
			assert.Equal(t, provider.URN, r.ProviderURN("kubernetes"), "%s %s must be deleted through (so before) the cluster's provider", r.Type, r.Name)
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// natGatewayPerZone: each zone's private subnet leaves through a NAT gateway in its own zone's
// public subnet, so one zone's failure leaves the other's nodes a way out; the first zone's parts
// keep the names of the single-NAT network, so turning it on replaces nothing. Off (the default),
// one NAT gateway serves both zones.
func TestCreateModeNATGatewayPerZone(t *testing.T) {
	zoneOf := func(rec *mockgraph.Recorder, subnetID string) string {
		for _, s := range rec.Find(typeSubnet, "") {
			if s.Name+"-id" == subnetID {
				return inputStr(t, s, "availabilityZone")
			}
		}
		t.Fatalf("no subnet %s", subnetID)
		return ""
	}
	rec := mustRunProgram(t, map[string]string{"natGatewayPerZone": "true"})
	nats := rec.Find(typeNatGateway, "")
	require.Len(t, nats, components.NetworkZones)
	require.Len(t, rec.Find("aws:ec2/eip:Eip", ""), components.NetworkZones, "an address per NAT gateway")
	natZone := map[string]string{}
	for _, n := range nats {
		natZone[n.Name+"-id"] = zoneOf(rec, inputStr(t, n, "subnetId"))
	}
	assert.ElementsMatch(t, []string{"cluster-nat", "cluster-nat-1"}, []string{nats[0].Name, nats[1].Name}, "the first zone's NAT keeps its name")
	assert.NotEqual(t, natZone[nats[0].Name+"-id"], natZone[nats[1].Name+"-id"], "the NAT gateways are in different zones")
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	routeNAT := map[string]string{}
	for _, rt := range rec.Find(typeRouteTable, "") {
		routes, _ := rt.Path("routes")
		for _, r := range plainValue(routes).([]any) {
			if nat, _ := r.(map[string]any)["natGatewayId"].(string); nat != "" {
				routeNAT[rt.Name+"-id"] = nat
			}
		}
		assert.True(t, eks.DependsOn(rt), "the cluster depends on route table %s", rt.Name)
	}
	private := 0
	for _, a := range rec.Find(typeRouteTableAssoc, "") {
		nat, viaNAT := routeNAT[inputStr(t, a, "routeTableId")]
		if !viaNAT {
			continue
		}
		private++
		assert.Equal(t, zoneOf(rec, inputStr(t, a, "subnetId")), natZone[nat], "private subnet association %s leaves through its own zone's NAT", a.Name)
	}
	assert.Equal(t, components.NetworkZones, private, "every private subnet is routed through a NAT gateway")
	for _, n := range nats {
		assert.True(t, eks.DependsOn(n), "the cluster depends on %s", n.Name)
	}
	cidrs, _ := mustRunProgram(t, map[string]string{"natGatewayPerZone": "true", "endpointPrivateAccess": "false", "endpointPublicAccessCidrs": `["203.0.113.0/24"]`}).
		One(typeEksCluster, "cluster")
	list, _ := cidrs.Path("publicAccessCidrs")
	assert.Len(t, plainValue(list), 1+components.NetworkZones, "both NAT gateways' addresses join a restricted public endpoint")

	rec = mustRunProgram(t, nil)
	require.Len(t, rec.Find(typeNatGateway, ""), 1, "one NAT gateway by default")
	require.Len(t, rec.Find(typeRouteTable, "cluster-private"), 1)
	assert.Empty(t, rec.Find(typeRouteTable, "cluster-private-1"), "one private route table by default")
}
