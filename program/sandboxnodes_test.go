package program

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// Create mode's sandboxes run on a NodeClass and NodePool of the stack's own: the nodes carry the
// stack's tags (the cluster IAM role may now tag what Auto Mode launches) and the NodePool's
// limits bound them, sized from the pools' maxReplicas and requests. The AWS and Auto Mode side
// cannot run here; these assert the graph the program registers.

// twoSizedPools: a pool of 1 GiB / 500m sandboxes, and one of 3 GiB sandboxes with only a CPU
// limit (its request, as the API server defaults it), claims per warm sandbox 1.5 and a headroom.
const twoSizedPools = `[
 {"name": "small", "template": {"image": "ghcr.io/acme/small:1.0", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}, "maxReplicas": 5},
 {"name": "large", "template": {"image": "ghcr.io/acme/large:1.0", "resources": {"requests": {"memory": "3Gi"}, "limits": {"cpu": "1", "memory": "3Gi"}}},
  "maxReplicas": 4, "headroom": 1, "targetValue": "1.5"}
]`

func TestCreateModeSandboxNodeClassIsTheStacks(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"tags": `{"team": "agents", "cost-center": "42"}`})
	nc := mustFind(t, rec, typeNodeClass, contract.SandboxNodeClassName)
	assert.Equal(t, "eks.amazonaws.com/v1", inputStr(t, nc, "apiVersion"))
	assert.Equal(t, contract.SandboxNodeClassName, inputStr(t, nc, "metadata", "name"))
	assert.NotEqual(t, "default", inputStr(t, nc, "metadata", "name"), "Auto Mode's own NodeClass is named default")
	assert.Equal(t, mockgraph.NodeRoleName, inputStr(t, nc, "spec", "role"), "pulumi-eks's Auto Mode node role, which EKS gave an access entry")

	// The cluster's own subnets (the private ones) and EKS's cluster security group, by ID.
	eks := mustFind(t, rec, typeEksCluster, "cluster")
	given, _ := eks.Path("privateSubnetIds")
	var want []any
	for _, id := range plainValue(given).([]any) {
		want = append(want, map[string]any{"id": id})
	}
	require.Len(t, want, 2)
	terms, _ := nc.Path("spec", "subnetSelectorTerms")
	assert.Equal(t, want, plainValue(terms))
	sgs, _ := nc.Path("spec", "securityGroupSelectorTerms")
	assert.Equal(t, []any{map[string]any{"id": mockgraph.ClusterSecurityGroupID}}, plainValue(sgs))

	// Every tag of the stack, the stack's own among them.
	tags, _ := nc.Path("spec", "tags")
	assert.Equal(t, map[string]any{"team": "agents", "cost-center": "42", contract.StackLabel: testProject + "." + testStack}, plainValue(tags))

	// A VPC of the team's own: its subnets.
	rec = mustRunProgram(t, map[string]string{"vpcId": "vpc-123", "privateSubnetIds": `["subnet-a","subnet-b"]`})
	terms, _ = mustFind(t, rec, typeNodeClass, contract.SandboxNodeClassName).Path("spec", "subnetSelectorTerms")
	assert.Equal(t, []any{map[string]any{"id": "subnet-a"}, map[string]any{"id": "subnet-b"}}, plainValue(terms))
}

// The Auto Mode managed policies do not let the cluster role apply tags of the team's own (EKS
// user guide, auto-learn-iam): the stack attaches the guide's tagging statements to the cluster
// IAM role pulumi-eks made, before the NodeClass asks for a tagged node.
func TestCreateModeClusterRoleMayTagWhatAutoModeLaunches(t *testing.T) {
	rec := mustRunProgram(t, nil)
	policies := rec.Find(typeRolePolicy, "")
	require.Len(t, policies, 1)
	rp := policies[0]
	assert.Equal(t, mockgraph.ClusterRoleName, inputStr(t, rp, "role"), "pulumi-eks's cluster IAM role (core.clusterIamRole)")
	var doc struct {
		Statement []struct {
			Sid       string
			Action    any
			Condition map[string]map[string]string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(inputStr(t, rp, "policy")), &doc))
	actions := map[string]any{}
	for _, s := range doc.Statement {
		actions[s.Sid] = s.Action
		assert.Equal(t, "${aws:PrincipalTag/eks:eks-cluster-name}", s.Condition["StringEquals"]["aws:RequestTag/eks:eks-cluster-name"],
			"%s holds only for this cluster's own requests", s.Sid)
	}
	assert.Equal(t, map[string]any{
		"Compute":    []any{"ec2:CreateFleet", "ec2:RunInstances", "ec2:CreateLaunchTemplate"},
		"Storage":    []any{"ec2:CreateVolume", "ec2:CreateSnapshot"},
		"Networking": "ec2:CreateNetworkInterface",
	}, actions)

	nc := mustFind(t, rec, typeNodeClass, contract.SandboxNodeClassName)
	assert.True(t, nc.DependsOn(rp), "the NodeClass waits for the permission, and goes first on destroy")
	assert.True(t, nc.DependsOn(mustFind(t, rec, typeRuntimeClass, contract.RuntimeClassName)), "Auto Mode's own resources are there first")
	assert.True(t, rp.DependsOn(mustFind(t, rec, typeEksCluster, "cluster")), "the policy goes before the cluster (and its role) on destroy")
}

func TestCreateModeSandboxNodePool(t *testing.T) {
	rec := mustRunProgram(t, nil)
	np := mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName)
	assert.Equal(t, "karpenter.sh/v1", inputStr(t, np, "apiVersion"))
	assert.True(t, np.DependsOn(mustFind(t, rec, typeNodeClass, contract.SandboxNodeClassName)))
	ref, _ := np.Path("spec", "template", "spec", "nodeClassRef")
	assert.Equal(t, map[string]any{"group": "eks.amazonaws.com", "kind": "NodeClass", "name": contract.SandboxNodeClassName}, plainValue(ref))
	taints, _ := np.Path("spec", "template", "spec", "taints")
	assert.Equal(t, []any{map[string]any{"key": contract.SandboxNodeTaintKey, "value": "true", "effect": "NoSchedule"}}, plainValue(taints))
	req, _ := np.Path("spec", "template", "spec", "requirements")
	assert.Equal(t, []any{
		map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}},
		map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
		map[string]any{"key": "eks.amazonaws.com/instance-category", "operator": "In", "values": []any{"c", "m", "r"}},
		map[string]any{"key": "eks.amazonaws.com/instance-generation", "operator": "Gt", "values": []any{"4"}},
		// One size, and memory from 2 to 8 GiB a vCPU: the largest node is known exactly.
		map[string]any{"key": "eks.amazonaws.com/instance-cpu", "operator": "In", "values": []any{"4"}},
		map[string]any{"key": "eks.amazonaws.com/instance-memory", "operator": "Gt", "values": []any{"8191"}},
		map[string]any{"key": "eks.amazonaws.com/instance-memory", "operator": "Lt", "values": []any{"32769"}},
	}, plainValue(req))
	disruption, _ := np.Path("spec", "disruption")
	assert.Equal(t, map[string]any{"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s", "budgets": []any{map[string]any{"nodes": "10%"}}}, plainValue(disruption))
	assert.Equal(t, "336h", inputStr(t, np, "spec", "template", "spec", "expireAfter"))
	assert.Equal(t, "24h", inputStr(t, np, "spec", "template", "spec", "terminationGracePeriod"))

	// The default pool: 3 warm and the 3 claims that fill it, no requests: 6 pods, one node.
	limits, _ := np.Path("spec", "limits")
	assert.Equal(t, map[string]any{"cpu": "4", "memory": "32Gi"}, plainValue(limits), "one node of 4 vCPUs, counted at the largest allowed (8 GiB a vCPU)")

	rec = mustRunProgram(t, map[string]string{"sandboxNodeCpu": "8"})
	np = mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName)
	req, _ = np.Path("spec", "template", "spec", "requirements")
	assert.Contains(t, plainValue(req), map[string]any{"key": "eks.amazonaws.com/instance-cpu", "operator": "In", "values": []any{"8"}})
	assert.Contains(t, plainValue(req), map[string]any{"key": "eks.amazonaws.com/instance-memory", "operator": "Lt", "values": []any{"65537"}})
	limits, _ = np.Path("spec", "limits")
	assert.Equal(t, map[string]any{"cpu": "8", "memory": "64Gi"}, plainValue(limits))
}

// The limits, by hand. A node of 4 vCPUs gives its pods 4000m less the kubelet's 80m (6% of the
// first core, 1% of the second, 0.5% of the next two): 3920m. The least memory the NodePool allows
// is 8192 MiB, less 615 (7.5%, the VM), 1465 (11 x 110 pods + 255) and 100 (eviction): 6012 MiB.
//
//	small: 5 warm + 5 claims = 10 sandboxes of 500m / 1024 MiB: min(3920/500, 6012/1024) = min(7, 5)
//	       = 5 a node, 2 nodes.
//	large: 4 warm + ceil((4-1) x 1.5) = 5 claims = 9 sandboxes of 1000m (its CPU limit) / 3072 MiB:
//	       min(3, 1) = 1 a node, 9 nodes.
//
// 11 nodes, each counted at the largest allowed instance (4 vCPUs, 32 GiB): cpu 44, memory 352Gi.
func TestCreateModeNodePoolLimitsFromMaxReplicasAndRequests(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"pools": twoSizedPools})
	limits, _ := mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName).Path("spec", "limits")
	assert.Equal(t, map[string]any{"cpu": "44", "memory": "352Gi"}, plainValue(limits))

	// The RuntimeClass's overhead joins every sandbox's requests, as the scheduler adds it: small's
	// are then 750m / 1536 MiB, min(5, 3) = 3 a node, 4 nodes; large's 1250m / 3584 MiB, 1 a node,
	// 9 nodes: 13.
	rec, err := runProgram(t, map[string]string{"pools": twoSizedPools}, func(r *mockgraph.Recorder) {
		r.RuntimeClassOverhead = map[string]string{"cpu": "250m", "memory": "512Mi"}
	})
	require.NoError(t, err)
	limits, _ = mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName).Path("spec", "limits")
	assert.Equal(t, map[string]any{"cpu": "52", "memory": "416Gi"}, plainValue(limits))

	// An overhead that leaves no node room for a sandbox stops the run, naming the pool.
	_, err = runProgram(t, map[string]string{"pools": twoSizedPools}, func(r *mockgraph.Recorder) {
		r.RuntimeClassOverhead = map[string]string{"memory": "28Gi"}
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the RuntimeClass isolated-sandbox's overhead leaves no node of the stack's NodePool room for a sandbox")
	assert.Contains(t, err.Error(), "pools[1].template.resources: a sandbox asks for 1 CPU and 31Gi memory with the RuntimeClass's overhead")
}

// The sandboxes select the stack's NodePool by name and tolerate its taint, in create mode only; in
// existing mode, or with sandboxNodePool false, their pod spec is as it always was, and there is
// no NodeClass, NodePool or tagging policy.
func TestCreateModeSandboxesRunOnlyOnTheStacksNodePool(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"pools": twoSizedPools})
	np := mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName)
	taints, _ := np.Path("spec", "template", "spec", "taints")
	taint := plainValue(taints).([]any)[0].(map[string]any)
	for _, name := range []string{"small", "large"} {
		tpl := mustFind(t, rec, typeTemplate, name+"-agent")
		sel, _ := tpl.Path("spec", "podTemplate", "spec", "nodeSelector")
		assert.Equal(t, map[string]any{"karpenter.sh/nodepool": contract.SandboxNodePoolName}, plainValue(sel), name)
		tol, _ := tpl.Path("spec", "podTemplate", "spec", "tolerations")
		assert.Equal(t, []any{map[string]any{"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}}, plainValue(tol),
			"%s tolerates exactly the NodePool's taint", name)
		// Up: the NodePool is there before the first sandbox. Destroy: every sandbox, claimed ones
		// too (the namespace's deletion waits for them), is gone before the NodePool.
		assert.True(t, tpl.DependsOn(np), name)
		assert.True(t, mustFind(t, rec, typePool, name).DependsOn(np), name)
		assert.True(t, mustFind(t, rec, typeNamespace, contract.DefaultNamespace+"-"+name).DependsOn(np), name)
	}
	assert.False(t, mustFind(t, rec, typeDeployment, "claim-exporter").DependsOn(np), "only the sandboxes use the stack's nodes")

	for name, cfg := range map[string]map[string]string{
		"existing": existingAdoptConfig,
		"off":      {"sandboxNodePool": "false"},
	} {
		rec := mustRunProgram(t, cfg)
		spec, _ := mustFind(t, rec, typeTemplate, "warm-pool-agent").Path("spec", "podTemplate", "spec")
		assert.NotContains(t, plainValue(spec), "nodeSelector", name)
		assert.NotContains(t, plainValue(spec), "tolerations", name)
		for _, typ := range []string{typeNodeClass, typeNodePool, typeRolePolicy} {
			assert.Empty(t, rec.Find(typ, ""), "%s: no %s", name, typ)
		}
	}
}

func TestSandboxNodeConfigIsRefusedWithTheReason(t *testing.T) {
	cases := map[string]struct {
		cfg  map[string]string
		want string
	}{
		"an eks: tag": {map[string]string{"tags": `{"eks:team": "agents"}`},
			"tags.eks:team cannot be on the sandboxes' nodes: eks: tags are Auto Mode's own"},
		"a karpenter.sh tag": {map[string]string{"tags": `{"karpenter.sh/nodepool": "x"}`},
			"tags.karpenter.sh/nodepool cannot be on the sandboxes' nodes: the NodeClass refuses it"},
		"the nodeclass tag": {map[string]string{"tags": `{"eks.amazonaws.com/nodeclass": "x"}`},
			"tags.eks.amazonaws.com/nodeclass cannot be on the sandboxes' nodes: the NodeClass refuses it"},
		"a cluster tag": {map[string]string{"tags": `{"kubernetes.io/cluster/other": "owned"}`},
			"tags.kubernetes.io/cluster/other is a tag the program sets itself"},
		"an odd size": {map[string]string{"sandboxNodeCpu": "6"},
			"sandboxNodeCpu is 6; it must be one of 4, 8, 16, 32"},
		"a size without the pool": {map[string]string{"sandboxNodePool": "false", "sandboxNodeCpu": "8"},
			"sandboxNodeCpu is 8, but sandboxNodePool is false"},
		"a sandbox no node holds": {map[string]string{"template": `{"image": "ghcr.io/acme/big:1.0", "resources": {"requests": {"memory": "40Gi"}}}`},
			"template.resources: a sandbox asks for 0 CPU and 40Gi memory; a node of the stack's NodePool (sandboxNodeCpu=4) gives its pods at most 3920m CPU and"},
		"the pool on an existing cluster": {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "sandboxNodePool": "false"},
			"sandboxNodePool only apply to a cluster the stack creates (clusterMode=create); an existing cluster keeps its endpoint, tags, logs, encryption, upgrade policy, network, nodes and protection"},
		"a size on an existing cluster": {map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "sandboxNodeCpu": "8"},
			"sandboxNodeCpu only apply to a cluster the stack creates"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
	}
	// Without the stack's NodePool, no NodeClass carries the tags: an eks: key is the team's to use.
	rec := mustRunProgram(t, map[string]string{"sandboxNodePool": "false", "tags": `{"eks:team": "agents"}`})
	assert.Empty(t, rec.Find(typeNodeClass, ""))
}

// A pool's claims are counted in thousandths, as the HPA computes: 50 x 1.1 is 55 claims, where
// the product in floating point is a little above 55 and would round up to 56.
func TestSandboxDemandsCountClaimsInThousandths(t *testing.T) {
	c := validConfig()
	c.MaxReplicas, c.TargetValue = 50, "1.1"
	d := c.sandboxDemands()
	require.Len(t, d, 1)
	assert.Equal(t, 50+55, d[0].Sandboxes)
	assert.Equal(t, "template.resources", d[0].Key)
}
