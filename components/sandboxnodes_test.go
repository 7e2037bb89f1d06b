package components

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kubelet's CPU reserve, Karpenter's AWS provider's ranges: 60 + 10 + 2 x 5 on four vCPUs,
// and 2.5 for every vCPU above.
func TestKubeReservedCPU(t *testing.T) {
	for cpus, want := range map[int]int64{4: 80, 8: 90, 16: 110, 32: 150} {
		assert.Equal(t, want, kubeReservedMilliCPU(cpus), "%d vCPUs", cpus)
	}
}

// A sandbox larger than the NodePool's least node is counted on the least node that holds one:
// 7 GiB needs 9442 MiB (9442 less 709 for the VM, 1465 and 100 is 7168), one a node.
func TestPlanCountsOnTheLeastNodeThatHoldsASandbox(t *testing.T) {
	plan, err := PlanSandboxNodes(4, []SandboxDemand{{Key: "big", Sandboxes: 3, Memory: 7 << 30}}, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, []PoolNodes{{Key: "big", PerNode: 1, Nodes: 3, NodeMiB: 9442}}, plan.Pools)
	assert.Less(t, allocatableMiB(9441), int64(7168), "one MiB less holds none")
	assert.Equal(t, "12", plan.LimitCPU())
	assert.Equal(t, "96Gi", plan.LimitMemory())

	// No requests: the pods bound, 110 a node.
	plan, err = PlanSandboxNodes(4, []SandboxDemand{{Key: "none", Sandboxes: 111}}, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, plan.Nodes)
}
