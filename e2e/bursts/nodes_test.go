package bursts

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutNodes is r with its node figures cleared: what the model gave before nodes.
func withoutNodes(r ModelResult) ModelResult {
	r.NodeSeconds, r.IdleNodeSeconds, r.NodesLaunched = 0, 0, 0
	return r
}

// Nodes that launch at once (D = 0, no batch window) change nothing a sandbox sees: on every
// trace family, several seeds and every policy, a finite K and an effectively unbounded one give
// the model's figures with nodes off (K = 0), claim waits included. Only the node cost is new.
func TestNodesLaunchedAtOnceAreTodaysModel(t *testing.T) {
	off := DefaultModelLoop()
	for _, family := range []string{TraceBurst, TraceDay, TraceLoadDay} {
		for _, seed := range []uint64{1, 7, 20260513} {
			tr := modelTrace(family, seed)
			bound := traceBound(tr)
			policies := ModelPolicies(bound)
			for _, size := range FixedSweep(bound) {
				policies = append(policies, ModelPolicy{Name: fmt.Sprintf("fixed-%d", size), Fixed: size})
			}
			for _, k := range []int{1, 8, 1 << 20} {
				on := off
				on.Nodes = ModelNodes{SlotsPerNode: k, ConsolidateAfter: 30 * time.Second}
				for _, p := range policies {
					want := Simulate(tr, p, off, seed)
					got := Simulate(tr, p, on, seed)
					require.Equal(t, want, withoutNodes(got), "%s seed %d, %s, K=%d", family, seed, p.Name, k)
					assert.Greater(t, got.NodeSeconds, 0.0)
				}
			}
		}
	}
}

// today's BenchmarkModel tables (recorded before nodes, /tmp/wp/nodes-model-before.txt): the model
// with nodes off must keep printing them.
var todaysModelTables = map[string]string{
	TraceBurst: `| blueprint | 78.7% | 61.0% | 0.51 | 9/30 | 9/30 |
| headroom-3 | 91.2% | 78.8% | 0.76 | 7/30 | 7/30 |
| headroom-5 | 96.5% | 89.0% | 0.94 | 9/30 | 9/30 |
| headroom-6 | 97.8% | 92.4% | 1.04 | 10/30 | 10/30 |
| arrivals | 83.7% | 73.5% | 0.45 | 25/30 | 25/30 |
| arrivals, minReplicas 6 | 90.5% | 82.3% | 0.57 | 29/30 | 29/30 |
| arrivals, L = boot+poll+sync (before) | 96.7% | 92.1% | 1.38 | 3/30 | 3/30 |
`,
	TraceDay: `| blueprint | 95.8% | 89.9% | 0.72 | 18/30 | 1/30 |
| headroom-3 | 98.9% | 95.4% | 1.05 | 13/30 | 1/30 |
| headroom-5 | 99.8% | 97.6% | 1.30 | 23/30 | 0/30 |
| headroom-6 | 99.9% | 97.6% | 1.42 | 29/30 | 0/30 |
| arrivals | 96.6% | 91.7% | 0.53 | 29/30 | 1/30 |
| arrivals, minReplicas 6 | 98.7% | 95.3% | 0.77 | 30/30 | 0/30 |
| arrivals, L = boot+poll+sync (before) | 99.1% | 95.3% | 1.71 | 9/30 | 0/30 |
`,
}

func TestModelWithNodesOffPrintsTodaysTables(t *testing.T) {
	for _, name := range []string{TraceBurst, TraceDay} {
		var b strings.Builder
		for _, r := range modelAcrossSeeds(name, 1, 30, ModelPolicies) {
			fmt.Fprintf(&b, "| %s | %.1f%% | %.1f%% | %.2f | %d/%d | %d/%d |\n", r.name, 100*r.warmMean, 100*r.warmMin, r.idleRatio, r.undominated, 30, r.goalMet, 30)
		}
		assert.Equal(t, todaysModelTables[name], b.String(), name)
	}
}

// nodeTrace is claims at the given times, each held for life.
func nodeTrace(end, life time.Duration, at ...time.Duration) *Trace {
	tr := &Trace{Name: "hand", Duration: end}
	for _, a := range at {
		tr.Arrivals = append(tr.Arrivals, Arrival{At: a, Lifetime: life})
	}
	return tr
}

// A sandbox that finds no free slot waits for a node: Karpenter's batch window (1 s without a
// new pending pod), then the launch delay, then its boot. Pods the launching node will hold
// launch no other node.
func TestNodesLaunchDelay(t *testing.T) {
	loop := DefaultModelLoop()
	loop.Nodes = ModelNodes{SlotsPerNode: 2, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: 30 * time.Second}
	// A fixed pool of 2 on one node of 2. The claims at 10 s and 12 s take both warm
	// sandboxes; their replacements find the node full (the claimed sandboxes stay on it): the
	// first opens a batch that closes at 11 s, a node Ready at 56 s, which will hold the second
	// too. The claim at 30 s finds nothing warm and no slot: its own node, launched at 31 s,
	// Ready at 76 s, then a boot of 5-6 s: a wait of 51-52 s.
	tr := nodeTrace(120*time.Second, 100*time.Second, 10*time.Second, 12*time.Second, 30*time.Second)
	r := Simulate(tr, ModelPolicy{Fixed: 2}, loop, 1)
	assert.Equal(t, 2, r.WarmHits)
	assert.Equal(t, 2, r.NodesLaunched)
	assert.Equal(t, []time.Duration{0, 0}, r.Waits[:2])
	assert.Greater(t, r.Waits[2], 51*time.Second)
	assert.LessOrEqual(t, r.Waits[2], 52*time.Second)
	// With nodes always there the same cold claim waits a boot.
	off := Simulate(tr, ModelPolicy{Fixed: 2}, DefaultModelLoop(), 1)
	assert.LessOrEqual(t, off.Waits[2], 6*time.Second)
	// A claim deleted before its node came never had a sandbox: it waited its lifetime.
	short := nodeTrace(120*time.Second, 20*time.Second, 10*time.Second, 12*time.Second, 30*time.Second)
	r = Simulate(short, ModelPolicy{Fixed: 2}, loop, 1)
	assert.Equal(t, 1, r.NeverReady)
	assert.Equal(t, 20*time.Second, r.Waits[2])
}

// Karpenter's batch window stays open while pods keep coming (each resets the 1 s idle) up to its
// 10 s maximum: claims every 0.5 s for 15 s, each cold on a full cluster of K = 1, launch once at
// 10 s after the first, then once more for the rest.
func TestNodesBatchWindow(t *testing.T) {
	loop := DefaultModelLoop()
	loop.Nodes = ModelNodes{SlotsPerNode: 1, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: 30 * time.Second}
	var at []time.Duration
	for d := 10 * time.Second; d < 25*time.Second; d += 500 * time.Millisecond {
		at = append(at, d)
	}
	// A pool of 1 whose one slot the first claim keeps.
	r := Simulate(nodeTrace(200*time.Second, 150*time.Second, at...), ModelPolicy{Fixed: 1}, loop, 1)
	// The first claim is warm; its replacement's pod opens the window at 10 s, which the
	// claims' pods keep open to its 10 s maximum: 21 pods (the replacement, the claims of
	// 10.5..20 s) launch 21 nodes at 20 s, Ready at 65 s; the 9 pods after (20.5..24.5 s) at 25.5 s, Ready
	// at 70.5 s (the replacement is first in line).
	assert.Equal(t, 30, r.NodesLaunched)
	assert.InDelta(t, (65*time.Second - 10500*time.Millisecond + 5500*time.Millisecond).Seconds(), r.Waits[1].Seconds(), 0.6)
	assert.InDelta(t, (70500*time.Millisecond - 24500*time.Millisecond + 5500*time.Millisecond).Seconds(), r.Waits[len(at)-1].Seconds(), 0.6)
}

// A new sandbox goes on the fullest Ready node with a free slot (ties: the oldest); a node still
// launching takes none.
func TestNodesPackOntoTheFullestNode(t *testing.T) {
	c := &modelCluster{cfg: ModelNodes{SlotsPerNode: 4}}
	a, b, full, launching := &modelNode{used: 1}, &modelNode{used: 3}, &modelNode{used: 4}, &modelNode{readyAt: time.Minute}
	c.nodes = []*modelNode{a, b, full, launching}
	n, ok := c.place(0)
	require.True(t, ok)
	assert.Same(t, b, n)
	assert.Equal(t, 4, b.used)
	n, _ = c.place(0)
	assert.Same(t, a, n, "b and full are full, launching is not Ready: a")
	// In the replay: a fixed pool of 10 on nodes of 8 starts on two nodes, and a pool of 16
	// on two as well.
	loop := DefaultModelLoop()
	loop.Nodes = GoalModelNodes()
	tr := nodeTrace(60*time.Second, 20*time.Second)
	span := (tr.Duration + 100*time.Millisecond).Seconds()
	assert.InDelta(t, 2*span, Simulate(tr, ModelPolicy{Fixed: 10}, loop, 1).NodeSeconds, 1e-6)
	assert.InDelta(t, 2*span, Simulate(tr, ModelPolicy{Fixed: 16}, loop, 1).NodeSeconds, 1e-6)
	assert.InDelta(t, 3*span, Simulate(tr, ModelPolicy{Fixed: 17}, loop, 1).NodeSeconds, 1e-6)
}

// An empty node goes consolidateAfter after its last sandbox left; a node holding a claimed
// sandbox (do-not-disrupt) stays, however idle the pool is.
func TestNodesConsolidation(t *testing.T) {
	loop := DefaultModelLoop()
	loop.Nodes = ModelNodes{SlotsPerNode: 1, ConsolidateAfter: 30 * time.Second}
	// K = 1, a fixed pool of 1 on node A. The claim at 10 s takes A's sandbox for 100 s; the
	// replacement goes on a new node B (D = 0). A holds only the claim, and stays until it is
	// deleted at 110 s, then goes 30 s later, at 140 s. B holds the pool to the end (200.1 s).
	tr := nodeTrace(200*time.Second, 100*time.Second, 10*time.Second)
	r := Simulate(tr, ModelPolicy{Fixed: 1}, loop, 1)
	assert.Equal(t, 1, r.NodesLaunched)
	assert.InDelta(t, 140+190.1, r.NodeSeconds, 0.11)
	// Beyond the one node the claim needs from 10 to 110 s: A's first 10 s, B's 100 s, both
	// for 30 s, B alone after.
	assert.InDelta(t, 10+100+2*30+60.1, r.IdleNodeSeconds, 0.21)
	// An autoscaled pool that grows onto a second node and shrinks off it: the emptied node
	// goes consolidateAfter later. Claims at 1-3 s (20 s each); desired 3 per claim held, at
	// most 9: 9 at 15 s, on A (8) and a new B; the sync at 30 s drops to 1, deleting Ready
	// sandboxes from the emptiest node first, so B empties at 30 s and goes at 60 s.
	loop.Nodes.SlotsPerNode = 8
	p := ModelPolicy{Floor: 1, Max: 9, Desired: func(d Demand) float64 { return float64(3 * d.Held) }}
	tr = nodeTrace(120*time.Second, 20*time.Second, 1*time.Second, 2*time.Second, 3*time.Second)
	r = Simulate(tr, p, loop, 1)
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 9}, {30 * time.Second, 1}}, r.Sizes)
	assert.Equal(t, 1, r.NodesLaunched)
	assert.InDelta(t, 120.1+45, r.NodeSeconds, 0.11)
	// With Karpenter's disruption delay the emptied B goes that much later: at 81 s.
	loop.Nodes.DisruptionDelay = LiveDisruptionDelay
	r = Simulate(tr, p, loop, 1)
	assert.Equal(t, 1, r.NodesLaunched)
	assert.InDelta(t, 120.1+45+21, r.NodeSeconds, 0.11)
}

// The node-aware policies are the program's formula on the model's readings: rounded to whole
// nodes around the claims held, the schedule's floor only in the trace's day part, the node
// launch in the refill.
func TestNodeAwarePoliciesRoundScheduleAndLaunch(t *testing.T) {
	nodes := GoalModelNodes()
	assert.Empty(t, NodeAwarePolicies(TraceDay, 20, ModelNodes{}), "no K, no node-aware policy")
	assert.Len(t, NodeAwarePolicies(TraceBurst, 20, nodes), 2, "no schedule on the burst trace: it has no day")
	ps := NodeAwarePolicies(TraceDay, 20, nodes)
	require.Len(t, ps, 3)
	rounded, scheduled, launch := ps[0], ps[1], ps[2]
	night, noon := 2*time.Minute, 10*time.Minute
	// 3 held, nothing arriving: no spares, the claims' node filled: 8 - 3.
	assert.Equal(t, 5.0, rounded.Desired(Demand{Held: 3, At: noon}))
	assert.Equal(t, 5.0, scheduled.Desired(Demand{Held: 3, At: night}))
	// At noon the schedule's 8 spares: 3 + 8 rounded up to 16, less the 3.
	assert.Equal(t, 13.0, scheduled.Desired(Demand{Held: 3, At: noon}))
	// The same arrivals ask more spares with the launch (6 + 55 s) in the refill than without.
	d := Demand{Held: 3, ArrivalsShort: 3, ArrivalsLong: 10, At: noon}
	assert.Greater(t, launch.Desired(d), rounded.Desired(d))
	for _, p := range ps {
		assert.Equal(t, 0.0, math.Mod(p.Desired(d)+3, 8), "%s: claims + pool fill whole nodes", p.Name)
	}
}
