package program

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// In create mode the sandboxes run on a NodeClass and NodePool of the stack's own
// (components/sandboxnodes.go): their nodes carry the stack's tags and the NodePool's limits
// bound them. sandboxNodePool=false leaves them on Auto Mode's built-in general-purpose pool.
const (
	defaultSandboxNodePool = true
	// defaultSandboxNodeCPU: 4 vCPUs, the xlarge sizes (c6a.xlarge is what advise prices a node at).
	defaultSandboxNodeCPU = 4
)

// sandboxNodes reports whether the stack makes its own NodeClass and NodePool.
func (c *Config) sandboxNodes() bool {
	return c.ClusterMode == components.ModeCreate && c.SandboxNodePool
}

// validateSandboxNodes checks the node keys and the tags the NodeClass would carry (create mode).
func (c *Config) validateSandboxNodes(add func(string, ...any)) {
	if !c.SandboxNodePool {
		if c.SandboxNodeCPU != defaultSandboxNodeCPU {
			add("sandboxNodeCpu is %d, but sandboxNodePool is false, so the sandboxes run on Auto Mode's built-in nodes and nothing reads it; remove it (`pulumi config rm sandboxNodeCpu`) or turn the stack's NodePool back on", c.SandboxNodeCPU)
		}
		return
	}
	if !slices.Contains(components.SandboxNodeCPUs, c.SandboxNodeCPU) {
		add("sandboxNodeCpu is %d; it must be one of %s, the vCPUs of every node of the stack's NodePool (default %d)", c.SandboxNodeCPU, joinInts(components.SandboxNodeCPUs), defaultSandboxNodeCPU)
	}
	keys := make([]string, 0, len(c.Tags))
	for k := range c.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "kubernetes.io/") {
			continue // refused with every other resource's tags (validateCreateMode)
		}
		if why := components.NodeClassTagProblem(k); why != "" {
			add("tags.%s cannot be on the sandboxes' nodes: %s. The stack's NodeClass carries every tag onto the instances it launches; choose another key, or set sandboxNodePool false (the sandboxes then run on Auto Mode's built-in nodes, which carry none of the stack's tags)", k, why)
		}
	}
}

// validateSandboxNodePlan refuses a pool whose sandbox no node of the NodePool could hold (the
// RuntimeClass's overhead, read from the cluster, is checked again at deploy).
func (c *Config) validateSandboxNodePlan(add func(string, ...any)) {
	if !c.sandboxNodes() {
		return
	}
	if _, err := components.PlanSandboxNodes(c.SandboxNodeCPU, c.sandboxDemands(), 0, 0); err != nil {
		add("%v", err)
	}
}

// sandboxDemands are the pools' shares of the NodePool. A pool's sandboxes at once: maxReplicas
// warm, and the claimed ones beside them (a claim keeps its sandbox on its node while the pool
// replaces it), as many as the claims that bring the pool to maxReplicas: desired is
// ceil(claims / targetValue) + headroom, so (maxReplicas - headroom) x targetValue, rounded up.
// Each asks for its container's requests, or its limits where it sets no request (the API server
// then takes the limit as the request).
func (c *Config) sandboxDemands() []components.SandboxDemand {
	var out []components.SandboxDemand
	for _, p := range c.Pools() {
		target, _ := strconv.ParseFloat(p.TargetValue, 64)
		// In thousandths, as the HPA computes: 10 x 0.3 is 3 claims, not the 3.0000000000000004
		// a float gives (and ceil would make 4). Split so that no product leaves an int64.
		milliTarget, m := int64(math.Round(target*1000)), int64(max(p.MaxReplicas-p.Headroom, 0))
		claims := m*(milliTarget/1000) + (m*(milliTarget%1000)+999)/1000
		cpu, mem := effectiveRequest(p.Agent, "cpu"), effectiveRequest(p.Agent, "memory")
		out = append(out, components.SandboxDemand{
			Key:       p.prefix + "template.resources",
			Sandboxes: p.MaxReplicas + int(claims),
			MilliCPU:  cpu.MilliValue(),
			Memory:    mem.Value(),
		})
	}
	return out
}

// effectiveRequest is what the scheduler counts for a resource of the agent's container.
func effectiveRequest(a components.Agent, name string) resource.Quantity {
	v, ok := a.Requests[name]
	if !ok {
		v = a.Limits[name]
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// sandboxNodesArgs is the NodeClass's and NodePool's inputs from the config and the cluster.
func (c *Config) sandboxNodesArgs(autoMode *components.AutoModeParts, runtime *components.SandboxRuntime) *components.SandboxNodesArgs {
	return &components.SandboxNodesArgs{
		ClusterRoleName: autoMode.ClusterRoleName, NodeRoleName: autoMode.NodeRoleName,
		SecurityGroupID: autoMode.SecurityGroupID, PrivateSubnetIDs: autoMode.PrivateSubnetIDs,
		Tags: c.AWSTags(), CPUs: c.SandboxNodeCPU, Demands: c.sandboxDemands(),
		RuntimeOverhead: runtime.Overhead, DependsOn: runtime.Installed,
	}
}

// sandboxNodesName is the SandboxNodes component's name.
const sandboxNodesName = "sandbox-nodes"
