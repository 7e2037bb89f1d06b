package components

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"k8s.io/apimachinery/pkg/api/resource"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// The stack's own nodes for its sandboxes (create mode): a NodeClass that tags them with the
// stack's tags and a NodePool that bounds them, instead of Auto Mode's built-in general-purpose
// pool, whose nodes carry none of the stack's tags and have no limits.

// Auto Mode's custom resources (EKS user guide, create-node-class and create-node-pool).
const (
	NodeClassAPIVersion = "eks.amazonaws.com/v1"
	NodeClassKind       = "NodeClass"
	NodePoolAPIVersion  = "karpenter.sh/v1"
	NodePoolKind        = "NodePool"
	// NodePoolLabel is the well-known label Karpenter puts on every node with its NodePool's name.
	NodePoolLabel = "karpenter.sh/nodepool"
)

// SandboxNodeCPUs are the vCPU counts the stack's NodePool may be given (eks.amazonaws.com/instance-cpu,
// the sizes of the EKS user guide's create-node-pool sample): at 2 vCPUs a C instance has 4 GiB, of
// which the reserve below takes 1.8; above 32, C, M and R's bare-metal sizes share the vCPU counts
// of the largest virtual ones, so the requirement could not keep them out.
var SandboxNodeCPUs = []int{4, 8, 16, 32}

// The memory of the instances the NodePool allows, per vCPU: C's 2 GiB to R's 8 GiB, the range of
// the categories the built-in pools use (c, m, r; EKS user guide, set-builtin-node-pools). The
// NodePool requires it (eks.amazonaws.com/instance-memory, MiB), so no family outside the range is
// ever launched and the arithmetic below holds whatever families AWS adds.
const (
	minNodeMiBPerCPU = 2048
	maxNodeMiBPerCPU = 8192
)

// What a node keeps from its pods, as upstream Karpenter's AWS provider computes an instance's
// allocatable (pkg/providers/instancetype/types.go: kubeReservedResources, evictionThreshold, memory,
// and its default --vm-memory-overhead-percent). Auto Mode does not publish its own; these are
// assumed, and what a first cluster shows (a node's status.allocatable) is the check.
const (
	// MaxPodsPerNode is EKS Auto Mode's bound on pods a node (EKS user guide, create-node-class:
	// "EKS limits the maximum number of pods on a node to 110").
	MaxPodsPerNode        = 110
	vmMemoryOverheadRatio = 0.075
	evictionMiB           = 100
)

// kubeReservedMiB is the kubelet's memory reserve for MaxPodsPerNode pods: 11 MiB a pod and 255.
func kubeReservedMiB() int64 { return 11*MaxPodsPerNode + 255 }

// kubeReservedMilliCPU: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% of
// every one above four.
func kubeReservedMilliCPU(cpus int) int64 {
	milli := float64(cpus * 1000)
	reserved := 0.0
	for _, r := range []struct{ start, end, share float64 }{{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, math.MaxInt32, 0.0025}} {
		if milli > r.start {
			reserved += (math.Min(milli, r.end) - r.start) * r.share
		}
	}
	return int64(reserved)
}

// allocatableMiB is the memory a node of memMiB gives its pods.
func allocatableMiB(memMiB int64) int64 {
	return memMiB - int64(math.Ceil(float64(memMiB)*vmMemoryOverheadRatio)) - kubeReservedMiB() - evictionMiB
}

// SandboxDemand is one pool's part of the stack's nodes: how many of its sandboxes exist at once
// at most, and what one asks of a node (its container's requests, or its limits where it has no
// request, as the API server defaults them).
type SandboxDemand struct {
	// Key is how a message names where the requests are set, e.g. "pools[1].template.resources".
	Key       string
	Sandboxes int
	MilliCPU  int64
	Memory    int64 // bytes
}

// PoolNodes is one pool's share of the plan.
type PoolNodes struct {
	Key string
	// PerNode is how many of its sandboxes the least node Karpenter may launch for them holds;
	// Nodes is ceil(Sandboxes / PerNode).
	PerNode, Nodes int
	// NodeMiB is that node's memory: the NodePool's least, or the least that holds one sandbox.
	NodeMiB int64
}

// NodePlan is the NodePool's limits and how they were reached.
type NodePlan struct {
	CPUs  int
	Nodes int
	Pools []PoolNodes
}

// LimitCPU and LimitMemory are spec.limits: Nodes times the largest instance the NodePool allows.
// Karpenter counts a node's whole capacity against the limits, not its pods' requests, and before
// each launch subtracts the capacity of the largest instance type it could pick (karpenter's
// scheduler, filterByRemainingResources and subtractMax), so Nodes whole nodes of the largest
// shape fit, and not one more of any shape: every allowed instance has CPUs vCPUs.
func (p NodePlan) LimitCPU() string { return strconv.Itoa(p.Nodes * p.CPUs) }
func (p NodePlan) LimitMemory() string {
	return fmt.Sprintf("%dGi", p.Nodes*p.CPUs*maxNodeMiBPerCPU/1024)
}

// PlanSandboxNodes sizes the NodePool for the demands on nodes of cpus vCPUs, each sandbox also
// asking for the RuntimeClass's overhead (the scheduler adds overhead.podFixed to every pod of the
// class). Each pool is counted on the node that holds the fewest of its sandboxes: Karpenter may
// launch any allowed instance, so the count is the least-memory instance that holds one (the
// NodePool's floor, 2 GiB a vCPU, unless a sandbox needs more). Pools are counted apart and added
// up: enough for each pool on nodes of its own (shared nodes hold as many, unless the scheduler's
// spreading leaves gaps no other pool's sandbox fits, which is not counted). A sandbox no allowed
// node can hold is an error naming its Key.
func PlanSandboxNodes(cpus int, demands []SandboxDemand, overheadMilliCPU, overheadMemory int64) (NodePlan, error) {
	plan := NodePlan{CPUs: cpus}
	allocCPU := int64(cpus*1000) - kubeReservedMilliCPU(cpus)
	minMiB, maxMiB := int64(cpus*minNodeMiBPerCPU), int64(cpus*maxNodeMiBPerCPU)
	var problems []string
	for _, d := range demands {
		cpu, mem := d.MilliCPU+overheadMilliCPU, d.Memory+overheadMemory
		memMiB := (mem + (1<<20 - 1)) >> 20
		if cpu > allocCPU || allocatableMiB(maxMiB) < memMiB {
			problems = append(problems, fmt.Sprintf("%s: a sandbox asks for %s CPU and %s memory%s; a node of the stack's NodePool (sandboxNodeCpu=%d) gives its pods at most %s CPU and %s memory, so none could hold it; lower the requests or raise sandboxNodeCpu",
				d.Key, resource.NewMilliQuantity(cpu, resource.DecimalSI), resource.NewQuantity(mem, resource.BinarySI), withOverhead(overheadMilliCPU, overheadMemory),
				cpus, resource.NewMilliQuantity(allocCPU, resource.DecimalSI), resource.NewQuantity(allocatableMiB(maxMiB)<<20, resource.BinarySI)))
			continue
		}
		// The least memory an allowed instance can have and still hold one sandbox.
		nodeMiB := minMiB
		if allocatableMiB(nodeMiB) < memMiB {
			lo, hi := minMiB, maxMiB
			for lo < hi {
				mid := (lo + hi) / 2
				if allocatableMiB(mid) >= memMiB {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			nodeMiB = lo
		}
		perNode := int64(MaxPodsPerNode)
		if cpu > 0 {
			perNode = min(perNode, allocCPU/cpu)
		}
		if mem > 0 {
			perNode = min(perNode, (allocatableMiB(nodeMiB)<<20)/mem)
		}
		nodes := (d.Sandboxes + int(perNode) - 1) / int(perNode)
		plan.Pools = append(plan.Pools, PoolNodes{Key: d.Key, PerNode: int(perNode), Nodes: nodes, NodeMiB: nodeMiB})
		plan.Nodes += nodes
	}
	if len(problems) > 0 {
		return NodePlan{}, fmt.Errorf("%s", strings.Join(problems, "\n  - "))
	}
	return plan, nil
}

func withOverhead(milliCPU, memory int64) string {
	if milliCPU == 0 && memory == 0 {
		return ""
	}
	return fmt.Sprintf(" with the RuntimeClass's overhead (%s CPU, %s memory)", resource.NewMilliQuantity(milliCPU, resource.DecimalSI), resource.NewQuantity(memory, resource.BinarySI))
}

// NodeClassTagProblem says why the NodeClass cannot carry a tag key, or "" when it can: the CRD
// refuses some keys (EKS user guide, create-node-class: kubernetes.io/cluster/*, karpenter.sh's
// provisioner-name, nodepool, nodeclaim and managed-by, eks.amazonaws.com/nodeclass), and Auto Mode
// sets the eks: keys on its nodes itself (eks:eks-cluster-name, eks:kubernetes-node-class-name,
// eks:kubernetes-node-pool-name).
func NodeClassTagProblem(key string) string {
	switch {
	case strings.HasPrefix(key, "kubernetes.io/cluster"):
		return "the NodeClass refuses kubernetes.io/cluster* tags"
	case key == "karpenter.sh/provisioner-name" || key == "karpenter.sh/nodepool" || key == "karpenter.sh/nodeclaim" || key == "karpenter.sh/managed-by":
		return "the NodeClass refuses it: Karpenter sets it on every node itself"
	case key == "eks.amazonaws.com/nodeclass":
		return "the NodeClass refuses it: Auto Mode sets it on every node itself"
	case strings.HasPrefix(strings.ToLower(key), "eks:"):
		return "eks: tags are Auto Mode's own (it sets eks:eks-cluster-name and eks:kubernetes-node-class-name/-pool-name on every node, and the tagging policy the stack attaches matches them)"
	}
	return ""
}

// SandboxPlacement is what a sandbox pod needs to run on the stack's nodes: their NodePool's
// label as its node selector, and the toleration for the NodePool's taint.
type SandboxPlacement struct {
	NodeSelector map[string]string
	TaintKey     string
	TaintValue   string
}

// SandboxNodePlacement is the placement on the stack's NodePool: its name as the node selector,
// and its taint's key and value.
func SandboxNodePlacement() *SandboxPlacement {
	return &SandboxPlacement{
		NodeSelector: map[string]string{NodePoolLabel: contract.SandboxNodePoolName},
		TaintKey:     contract.SandboxNodeTaintKey, TaintValue: "true",
	}
}

// PodSpecFields are the pod spec's fields for the placement (nodeSelector, tolerations), as plain
// data: what the sandboxes' pod template gets.
func (p *SandboxPlacement) PodSpecFields() map[string]any {
	selector := map[string]any{}
	for k, v := range p.NodeSelector {
		selector[k] = v
	}
	return map[string]any{
		"nodeSelector": selector,
		"tolerations": []any{map[string]any{
			"key": p.TaintKey, "operator": "Equal", "value": p.TaintValue, "effect": "NoSchedule",
		}},
	}
}

// podSpecFields are PodSpecFields as Pulumi inputs.
func (p *SandboxPlacement) podSpecFields() pulumi.Map {
	return toPulumi(p.PodSpecFields()).(pulumi.Map)
}

// toPulumi turns plain data (maps, lists, strings) into Pulumi inputs of the same shape; a value
// that is already an input is kept.
func toPulumi(v any) pulumi.Input {
	switch v := v.(type) {
	case pulumi.Input:
		return v
	case map[string]any:
		m := pulumi.Map{}
		for k, e := range v {
			m[k] = toPulumi(e)
		}
		return m
	case []any:
		a := make(pulumi.Array, len(v))
		for i, e := range v {
			a[i] = toPulumi(e)
		}
		return a
	case []string:
		return pulumi.ToStringArray(v)
	case string:
		return pulumi.String(v)
	}
	panic(fmt.Sprintf("toPulumi: %T is not plain data", v))
}

// SandboxNodesArgs is what the NodeClass and NodePool are made of.
type SandboxNodesArgs struct {
	// From the cluster (Cluster.AutoMode): the role whose policies the tagging joins, the nodes'
	// role, EKS's cluster security group and the private subnets.
	ClusterRoleName  pulumi.StringInput
	NodeRoleName     pulumi.StringInput
	SecurityGroupID  pulumi.StringInput
	PrivateSubnetIDs pulumi.StringArrayInput
	// Tags go onto every instance the NodeClass launches; each key must pass NodeClassTagProblem.
	Tags map[string]string
	// CPUs is the vCPU count of every node (one of SandboxNodeCPUs); Demands the pools' sandboxes.
	CPUs    int
	Demands []SandboxDemand
	// RuntimeOverhead is the sandboxes' RuntimeClass's overhead.podFixed (cpu, memory), if any.
	RuntimeOverhead pulumi.StringMapInput
	// DependsOn: the cluster's RuntimeClass (so Auto Mode's own resources are there first).
	DependsOn []pulumi.Resource
}

// SandboxNodesType is the SandboxNodes component's type token.
const SandboxNodesType = "warmpool:index:SandboxNodes"

// SandboxNodes is the tagging policy, the NodeClass and the NodePool: awscomponents.NewSandboxNodes
// makes it with the policy (an IAM resource), AddNodeClassAndPool the rest.
type SandboxNodes struct {
	pulumi.ResourceState

	TaggingPolicy pulumi.CustomResource // an aws:iam RolePolicy
	NodeClass     *apiextensions.CustomResource
	NodePool      *apiextensions.CustomResource
	// Placement puts a sandbox pod on these nodes (WarmPoolArgs.Nodes).
	Placement *SandboxPlacement
}

// Disruption as the NodePool states it. Every sandbox carries karpenter.sh/do-not-disrupt
// (SandboxPodAnnotations), so consolidation only ever removes an empty node: WhenEmpty says so,
// 30 s after it empties (the figure docs/bursts.md's node model takes). The budget, the expiry and
// the termination grace period are Auto Mode's defaults written out (EKS user guide,
// create-node-pool, "Disruption" and "Termination Grace Period"): 10% of the nodes at a time, a
// node replaced after 336 h, and a node being replaced waits up to 24 h for its sandboxes.
const (
	consolidationPolicy    = "WhenEmpty"
	consolidateAfter       = "30s"
	disruptionBudgetNodes  = "10%"
	nodeExpireAfter        = "336h"
	terminationGracePeriod = "24h"
)

// CheckSandboxNodes refuses, before anything is registered, a tag the NodeClass cannot carry and
// a sandbox no node of the NodePool could hold.
func CheckSandboxNodes(name string, args *SandboxNodesArgs) error {
	var badTags []string
	for k := range args.Tags {
		if why := NodeClassTagProblem(k); why != "" {
			badTags = append(badTags, k+": "+why)
		}
	}
	if len(badTags) > 0 {
		sort.Strings(badTags)
		return fmt.Errorf("sandbox nodes %s: the NodeClass cannot carry these tags: %s", name, strings.Join(badTags, "; "))
	}
	if _, err := PlanSandboxNodes(args.CPUs, args.Demands, 0, 0); err != nil {
		return fmt.Errorf("sandbox nodes %s: %w", name, err)
	}
	return nil
}

// AddNodeClassAndPool makes n's NodeClass, once n.TaggingPolicy lets the cluster role tag what
// it launches, then its NodePool, and records n's outputs.
func AddNodeClassAndPool(ctx *pulumi.Context, n *SandboxNodes, args *SandboxNodesArgs) (*SandboxNodes, error) {
	labels := pulumi.StringMap{contract.PartOfLabel: pulumi.String(contract.ManagedByValue)}
	subnets := args.PrivateSubnetIDs.ToStringArrayOutput().ApplyT(func(ids []string) []map[string]string {
		terms := make([]map[string]string, len(ids))
		for i, id := range ids {
			terms[i] = map[string]string{"id": id}
		}
		return terms
	}).(pulumi.StringMapArrayOutput)
	nodeClass, err := apiextensions.NewCustomResource(ctx, contract.SandboxNodeClassName, &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(NodeClassAPIVersion),
		Kind:       pulumi.String(NodeClassKind),
		Metadata:   &metav1.ObjectMetaArgs{Name: pulumi.String(contract.SandboxNodeClassName), Labels: labels},
		OtherFields: kubernetes.UntypedArgs{
			"spec": pulumi.Map{
				// pulumi-eks's Auto Mode node role: EKS made its access entry with the cluster.
				"role":                       args.NodeRoleName,
				"subnetSelectorTerms":        subnets,
				"securityGroupSelectorTerms": pulumi.Array{pulumi.Map{"id": args.SecurityGroupID}},
				"tags":                       pulumi.ToStringMap(args.Tags),
			},
		},
	}, pulumi.Parent(n),
		// Up: the cluster role may tag before the first node is asked for. Destroy: the NodeClass
		// (and the nodes it launched) goes before the permission.
		pulumi.DependsOn(append([]pulumi.Resource{n.TaggingPolicy}, args.DependsOn...)))
	if err != nil {
		return nil, err
	}
	n.NodeClass = nodeClass

	overhead := args.RuntimeOverhead
	if overhead == nil {
		overhead = pulumi.StringMap{}
	}
	limits := overhead.ToStringMapOutput().ApplyT(func(overhead map[string]string) (map[string]string, error) {
		cpu, mem, err := parseOverhead(overhead)
		if err != nil {
			return nil, Explain(ctx, n, err)
		}
		plan, err := PlanSandboxNodes(args.CPUs, args.Demands, cpu, mem)
		if err != nil {
			return nil, Explain(ctx, n, fmt.Errorf("the RuntimeClass %s's overhead leaves no node of the stack's NodePool room for a sandbox:\n  - %w", contract.RuntimeClassName, err))
		}
		return map[string]string{"cpu": plan.LimitCPU(), "memory": plan.LimitMemory()}, nil
	}).(pulumi.StringMapOutput)
	placement := SandboxNodePlacement()
	nodePool, err := apiextensions.NewCustomResource(ctx, contract.SandboxNodePoolName, &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(NodePoolAPIVersion),
		Kind:       pulumi.String(NodePoolKind),
		Metadata:   &metav1.ObjectMetaArgs{Name: pulumi.String(contract.SandboxNodePoolName), Labels: labels},
		OtherFields: kubernetes.UntypedArgs{
			"spec": toPulumi(sandboxNodePoolSpec(args.CPUs, placement, limits)),
		},
	}, pulumi.Parent(n), pulumi.DependsOn([]pulumi.Resource{nodeClass}))
	if err != nil {
		return nil, err
	}
	n.NodePool = nodePool
	n.Placement = placement
	return n, ctx.RegisterResourceOutputs(n, pulumi.Map{
		"nodeClass": pulumi.String(contract.SandboxNodeClassName),
		"nodePool":  pulumi.String(contract.SandboxNodePoolName),
	})
}

// SandboxNodePoolSpec is the NodePool's spec as plain data (maps, lists, strings), as NewSandboxNodes
// makes it for plan: the stack's NodeClass, the placement's taint, the requirements for
// plan.CPUs, the disruption, and the limits LimitCPU and LimitMemory.
func SandboxNodePoolSpec(plan NodePlan) map[string]any {
	return sandboxNodePoolSpec(plan.CPUs, SandboxNodePlacement(), map[string]any{"cpu": plan.LimitCPU(), "memory": plan.LimitMemory()})
}

// sandboxNodePoolSpec is the spec with limits as given: plain data, or the component's output
// (computed once the RuntimeClass's overhead is known).
func sandboxNodePoolSpec(cpus int, placement *SandboxPlacement, limits any) map[string]any {
	return map[string]any{
		"template": map[string]any{
			"spec": map[string]any{
				"nodeClassRef": map[string]any{
					"group": strings.Split(NodeClassAPIVersion, "/")[0],
					"kind":  NodeClassKind,
					"name":  contract.SandboxNodeClassName,
				},
				// Only the sandboxes tolerate it: nothing else lands on the stack's nodes.
				"taints": []any{map[string]any{
					"key": placement.TaintKey, "value": placement.TaintValue, "effect": "NoSchedule",
				}},
				"requirements":           nodeRequirements(cpus),
				"expireAfter":            nodeExpireAfter,
				"terminationGracePeriod": terminationGracePeriod,
			},
		},
		"limits": limits,
		"disruption": map[string]any{
			"consolidationPolicy": consolidationPolicy,
			"consolidateAfter":    consolidateAfter,
			"budgets":             []any{map[string]any{"nodes": disruptionBudgetNodes}},
		},
	}
}

// nodeRequirements are the built-in pools' (on-demand, amd64 as general-purpose, C, M and R of
// generation 5 or newer: EKS user guide, set-builtin-node-pools), where the sandboxes ran before,
// bounded to one vCPU count and to the memory range the limits are computed for.
func nodeRequirements(cpus int) []any {
	req := func(key, op string, values ...string) any {
		return map[string]any{"key": key, "operator": op, "values": values}
	}
	return []any{
		req("karpenter.sh/capacity-type", "In", "on-demand"),
		req("kubernetes.io/arch", "In", "amd64"),
		req("eks.amazonaws.com/instance-category", "In", "c", "m", "r"),
		req("eks.amazonaws.com/instance-generation", "Gt", "4"),
		req("eks.amazonaws.com/instance-cpu", "In", strconv.Itoa(cpus)),
		req("eks.amazonaws.com/instance-memory", "Gt", strconv.Itoa(cpus*minNodeMiBPerCPU-1)),
		req("eks.amazonaws.com/instance-memory", "Lt", strconv.Itoa(cpus*maxNodeMiBPerCPU+1)),
	}
}

// parseOverhead reads a RuntimeClass's overhead.podFixed: milli-CPUs and bytes.
func parseOverhead(podFixed map[string]string) (int64, int64, error) {
	var cpu, mem int64
	for name, value := range podFixed {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return 0, 0, fmt.Errorf("the RuntimeClass %s's overhead.podFixed.%s is %q, not a quantity: %w", contract.RuntimeClassName, name, value, err)
		}
		switch name {
		case "cpu":
			cpu = q.MilliValue()
		case "memory":
			mem = q.Value()
		}
	}
	return cpu, mem, nil
}
