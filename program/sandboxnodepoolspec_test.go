package program

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// The NodePool the program registers is components.SandboxNodePoolSpec, field for field: the
// live test that runs that spec on the local Karpenter (TestLiveSimulatedNodeSandboxNodePoolLimits)
// holds what the stack makes. The default pool needs one node of 4 vCPUs.
func TestSandboxNodePoolSpecIsWhatTheProgramRegisters(t *testing.T) {
	rec := mustRunProgram(t, nil)
	spec, _ := mustFind(t, rec, typeNodePool, contract.SandboxNodePoolName).Path("spec")
	b, err := json.Marshal(components.SandboxNodePoolSpec(components.NodePlan{CPUs: 4, Nodes: 1}))
	require.NoError(t, err)
	var want any
	require.NoError(t, json.Unmarshal(b, &want))
	assert.Equal(t, want, plainValue(spec))
}
