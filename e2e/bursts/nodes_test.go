package bursts

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// withoutNodes is r with its node figures cleared: what the model gave before nodes.
func withoutNodes(r replay.Result) replay.Result {
	r.NodeSeconds, r.IdleNodeSeconds, r.NodesLaunched, r.NodeCounts = 0, 0, 0, nil
	return r
}

// Nodes that launch at once (D = 0, no batch window) change nothing a sandbox sees: on every
// trace family, several seeds and every policy, a finite K and an effectively unbounded one give
// the model's figures with nodes off (K = 0), claim waits included. Only the node cost is new.
func TestNodesLaunchedAtOnceAreTodaysModel(t *testing.T) {
	off := replay.DefaultLoop()
	for _, family := range []string{replay.TraceBurst, replay.TraceDay, replay.TraceLoadDay} {
		for _, seed := range []uint64{1, 7, 20260513} {
			tr := modelTrace(family, seed)
			bound := traceBound(tr)
			policies := ModelPolicies(bound)
			for _, size := range FixedSweep(bound) {
				policies = append(policies, replay.Policy{Name: fmt.Sprintf("fixed-%d", size), Fixed: size})
			}
			for _, k := range []int{1, 8, 1 << 20} {
				on := off
				on.Nodes = replay.Nodes{SlotsPerNode: k, ConsolidateAfter: 30 * time.Second}
				for _, p := range policies {
					want := replay.Simulate(tr, p, off, seed)
					got := replay.Simulate(tr, p, on, seed)
					require.Equal(t, want, withoutNodes(got), "%s seed %d, %s, K=%d", family, seed, p.Name, k)
					assert.Greater(t, got.NodeSeconds, 0.0)
				}
			}
		}
	}
}

// today's BenchmarkModel tables (recorded before nodes): the model
// with nodes off must keep printing them.
var todaysModelTables = map[string]string{
	replay.TraceBurst: `| blueprint | 78.7% | 61.0% | 0.51 | 9/30 | 9/30 |
| headroom-3 | 91.2% | 78.8% | 0.76 | 7/30 | 7/30 |
| headroom-5 | 96.5% | 89.0% | 0.94 | 9/30 | 9/30 |
| headroom-6 | 97.8% | 92.4% | 1.04 | 10/30 | 10/30 |
| arrivals | 83.7% | 73.5% | 0.45 | 25/30 | 25/30 |
| arrivals, minReplicas 6 | 90.5% | 82.3% | 0.57 | 29/30 | 29/30 |
| arrivals, L = boot+poll+sync (before) | 96.7% | 92.1% | 1.38 | 3/30 | 3/30 |
`,
	replay.TraceDay: `| blueprint | 95.8% | 89.9% | 0.72 | 18/30 | 1/30 |
| headroom-3 | 98.9% | 95.4% | 1.05 | 13/30 | 1/30 |
| headroom-5 | 99.8% | 97.6% | 1.30 | 23/30 | 0/30 |
| headroom-6 | 99.9% | 97.6% | 1.42 | 29/30 | 0/30 |
| arrivals | 96.6% | 91.7% | 0.53 | 29/30 | 1/30 |
| arrivals, minReplicas 6 | 98.7% | 95.3% | 0.77 | 30/30 | 0/30 |
| arrivals, L = boot+poll+sync (before) | 99.1% | 95.3% | 1.71 | 9/30 | 0/30 |
`,
}

func TestModelWithNodesOffPrintsTodaysTables(t *testing.T) {
	for _, name := range []string{replay.TraceBurst, replay.TraceDay} {
		var b strings.Builder
		for _, r := range modelAcrossSeeds(name, 1, 30, ModelPolicies) {
			fmt.Fprintf(&b, "| %s | %.1f%% | %.1f%% | %.2f | %d/%d | %d/%d |\n", r.name, 100*r.warmMean, 100*r.warmMin, r.idleRatio, r.undominated, 30, r.goalMet, 30)
		}
		assert.Equal(t, todaysModelTables[name], b.String(), name)
	}
}

// nodeTrace is claims at the given times, each held for life.
// A sandbox that finds no free slot waits for a node: Karpenter's batch window (1 s without a
// new pending pod), then the launch delay, then its boot. Pods the launching node will hold
// launch no other node.
// Karpenter's batch window stays open while pods keep coming (each resets the 1 s idle) up to its
// 10 s maximum: claims every 0.5 s for 15 s, each cold on a full cluster of K = 1, launch once at
// 10 s after the first, then once more for the rest.
// A new sandbox goes on the fullest Ready node with a free slot (ties: the oldest); a node still
// launching takes none.
// An empty node goes consolidateAfter after its last sandbox left; a node holding a claimed
// sandbox (do-not-disrupt) stays, however idle the pool is.
// The node-aware policies are the program's formula on the model's readings: rounded to whole
// nodes around the claims held, the schedule's floor only in the trace's day part, the node
// launch in the refill.
func TestNodeAwarePoliciesRoundScheduleAndLaunch(t *testing.T) {
	nodes := replay.GoalNodes()
	assert.Empty(t, NodeAwarePolicies(replay.TraceDay, 20, replay.Nodes{}), "no K, no node-aware policy")
	assert.Len(t, NodeAwarePolicies(replay.TraceBurst, 20, nodes), 2, "no schedule on the burst trace: it has no day")
	ps := NodeAwarePolicies(replay.TraceDay, 20, nodes)
	require.Len(t, ps, 3)
	rounded, scheduled, launch := ps[0], ps[1], ps[2]
	night, noon := 2*time.Minute, 10*time.Minute
	// 3 held, nothing arriving: no spares, the claims' node filled: 8 - 3.
	assert.Equal(t, 5.0, rounded.Desired(replay.Demand{Held: 3, At: noon}))
	assert.Equal(t, 5.0, scheduled.Desired(replay.Demand{Held: 3, At: night}))
	// At noon the schedule's 8 spares: 3 + 8 rounded up to 16, less the 3.
	assert.Equal(t, 13.0, scheduled.Desired(replay.Demand{Held: 3, At: noon}))
	// The same arrivals ask more spares with the launch (6 + 55 s) in the refill than without.
	d := replay.Demand{Held: 3, ArrivalsShort: 3, ArrivalsLong: 10, At: noon}
	assert.Greater(t, launch.Desired(d), rounded.Desired(d))
	for _, p := range ps {
		assert.Equal(t, 0.0, math.Mod(p.Desired(d)+3, 8), "%s: claims + pool fill whole nodes", p.Name)
	}
}
