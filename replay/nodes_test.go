package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

func nodeTrace(end, life time.Duration, at ...time.Duration) *Trace {
	tr := &Trace{Name: "hand", Duration: end}
	for _, a := range at {
		tr.Arrivals = append(tr.Arrivals, Arrival{At: a, Lifetime: life})
	}
	return tr
}

func TestNodesLaunchDelay(t *testing.T) {
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 2, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: 30 * time.Second}
	// A fixed pool of 2 on one node of 2. The claims at 10 s and 12 s take both warm
	// sandboxes; their replacements find the node full (the claimed sandboxes stay on it): the
	// first opens a batch that closes at 11 s, a node Ready at 56 s, which will hold the second
	// too. The claim at 30 s finds nothing warm and no slot: its own node, launched at 31 s,
	// Ready at 76 s, then a boot of 5-6 s: a wait of 51-52 s.
	tr := nodeTrace(120*time.Second, 100*time.Second, 10*time.Second, 12*time.Second, 30*time.Second)
	r := Simulate(tr, Policy{Fixed: 2}, loop, 1)
	assert.Equal(t, 2, r.WarmHits)
	assert.Equal(t, 2, r.NodesLaunched)
	assert.Equal(t, []time.Duration{0, 0}, r.Waits[:2])
	assert.Greater(t, r.Waits[2], 51*time.Second)
	assert.LessOrEqual(t, r.Waits[2], 52*time.Second)
	// With nodes always there the same cold claim waits a boot.
	off := Simulate(tr, Policy{Fixed: 2}, DefaultLoop(), 1)
	assert.LessOrEqual(t, off.Waits[2], 6*time.Second)
	// A claim deleted before its node came never had a sandbox: it waited its lifetime.
	short := nodeTrace(120*time.Second, 20*time.Second, 10*time.Second, 12*time.Second, 30*time.Second)
	r = Simulate(short, Policy{Fixed: 2}, loop, 1)
	assert.Equal(t, 1, r.NeverReady)
	assert.Equal(t, 20*time.Second, r.Waits[2])
}

func TestNodesBatchWindow(t *testing.T) {
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 1, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: 30 * time.Second}
	var at []time.Duration
	for d := 10 * time.Second; d < 25*time.Second; d += 500 * time.Millisecond {
		at = append(at, d)
	}
	// A pool of 1 whose one slot the first claim keeps.
	r := Simulate(nodeTrace(200*time.Second, 150*time.Second, at...), Policy{Fixed: 1}, loop, 1)
	// The first claim is warm; its replacement's pod opens the window at 10 s, which the
	// claims' pods keep open to its 10 s maximum: 21 pods (the replacement, the claims of
	// 10.5..20 s) launch 21 nodes at 20 s, Ready at 65 s; the 9 pods after (20.5..24.5 s) at 25.5 s, Ready
	// at 70.5 s (the replacement is first in line).
	assert.Equal(t, 30, r.NodesLaunched)
	assert.InDelta(t, (65*time.Second - 10500*time.Millisecond + 5500*time.Millisecond).Seconds(), r.Waits[1].Seconds(), 0.6)
	assert.InDelta(t, (70500*time.Millisecond - 24500*time.Millisecond + 5500*time.Millisecond).Seconds(), r.Waits[len(at)-1].Seconds(), 0.6)
}

// Other pods of the cluster that become pending while the pool's window is open keep it open:
// Karpenter batches the whole cluster's pending pods at once.
func TestNodesBatchWindowIsTheClusters(t *testing.T) {
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 1, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: 30 * time.Second}
	// A pool of 1 on its one node: the claim at 10 s takes the warm sandbox, and its
	// replacement's pod, pending at 10 s, waits for a node.
	tr := nodeTrace(200*time.Second, 150*time.Second, 10*time.Second)
	alone := Simulate(tr, Policy{Fixed: 1}, loop, 1)
	require.GreaterOrEqual(t, len(alone.NodeCounts), 2)
	assert.Equal(t, 11*time.Second, alone.NodeCounts[1].At, "the pool alone: its window closes BatchIdle after its pod")

	// Other pools' pods pending at 10.5, 11.3 and 12 s keep the window open to 13 s.
	loop.Nodes.SharedTriggers = []time.Duration{5 * time.Second, 10500 * time.Millisecond, 11300 * time.Millisecond, 12 * time.Second, 60 * time.Second}
	shared := Simulate(tr, Policy{Fixed: 1}, loop, 1)
	require.GreaterOrEqual(t, len(shared.NodeCounts), 2)
	assert.Equal(t, 13*time.Second, shared.NodeCounts[1].At, "one Karpenter: the cluster's pods share the window")

	// ... but not beyond BatchMax after the pool's window opened.
	loop.Nodes.SharedTriggers = nil
	for d := 10 * time.Second; d < 30*time.Second; d += 500 * time.Millisecond {
		loop.Nodes.SharedTriggers = append(loop.Nodes.SharedTriggers, d)
	}
	capped := Simulate(tr, Policy{Fixed: 1}, loop, 1)
	require.GreaterOrEqual(t, len(capped.NodeCounts), 2)
	assert.Equal(t, 20*time.Second, capped.NodeCounts[1].At, "BatchMax closes the window")
}

func TestNodesSpreadOntoTheEmptiestNode(t *testing.T) {
	c := &modelCluster{cfg: Nodes{SlotsPerNode: 4}}
	a, b, full, launching := &modelNode{used: 2}, &modelNode{used: 1}, &modelNode{used: 4}, &modelNode{readyAt: time.Minute}
	c.nodes = []*modelNode{a, b, full, launching}
	n, ok := c.place(0)
	require.True(t, ok)
	assert.Same(t, b, n, "the emptiest Ready node, b")
	assert.Equal(t, 2, b.used)
	n, _ = c.place(0)
	assert.Same(t, a, n, "a and b hold two each: the oldest, a")
	n, _ = c.place(0)
	assert.Same(t, b, n)
	for range 2 {
		c.place(0)
	}
	_, ok = c.place(0)
	assert.False(t, ok, "every Ready node full, launching is not Ready: no slot")
	// In the replay: a fixed pool of 10 on nodes of 8 starts on two nodes, and a pool of 16
	// on two as well.
	loop := DefaultLoop()
	loop.Nodes = GoalNodes()
	tr := nodeTrace(60*time.Second, 20*time.Second)
	span := (tr.Duration + 100*time.Millisecond).Seconds()
	assert.InDelta(t, 2*span, Simulate(tr, Policy{Fixed: 10}, loop, 1).NodeSeconds, 1e-6)
	assert.InDelta(t, 2*span, Simulate(tr, Policy{Fixed: 16}, loop, 1).NodeSeconds, 1e-6)
	assert.InDelta(t, 3*span, Simulate(tr, Policy{Fixed: 17}, loop, 1).NodeSeconds, 1e-6)
}

func TestNodesConsolidation(t *testing.T) {
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 1, ConsolidateAfter: 30 * time.Second}
	// K = 1, a fixed pool of 1 on node A. The claim at 10 s takes A's sandbox for 100 s; the
	// replacement goes on a new node B (D = 0). A holds only the claim, and stays until it is
	// deleted at 110 s, then goes 30 s later, at 140 s. B holds the pool to the end (200.1 s).
	tr := nodeTrace(200*time.Second, 100*time.Second, 10*time.Second)
	r := Simulate(tr, Policy{Fixed: 1}, loop, 1)
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
	p := Policy{Floor: 1, Max: 9, Desired: func(d Demand) float64 { return float64(3 * d.Held) }}
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

func TestNodesDisruptionBudget(t *testing.T) {
	// K = 1, D = 0: a pool held at 5 (five nodes) drops to 1 at the sync at 15 s, so four nodes
	// empty at once. consolidateAfter 5 s and the disruption delay 21 s: the first is gone at
	// 41 s. Under the default budget (10 % of 5 nodes, rounded up: one at a time) each next one
	// goes the spacing (25 s) later, as the live run read; with no budget, all four at 41 s.
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 1, ConsolidateAfter: 5 * time.Second, DisruptionDelay: LiveDisruptionDelay,
		DisruptionBudget: DefaultDisruptionBudget, DisruptionSpacing: LiveDisruptionSpacing}
	p := Policy{Floor: 1, Max: 5, InitialScale: 5, Desired: func(d Demand) float64 { return 1 }}
	tr := nodeTrace(150*time.Second, 0)
	r := Simulate(tr, p, loop, 1)
	s := time.Second
	assert.Equal(t, []NodesAt{{0, 5}, {41 * s, 4}, {66 * s, 3}, {91 * s, 2}, {116 * s, 1}}, r.NodeCounts)
	assert.InDelta(t, 5*41+4*25+3*25+2*25+1*(150.1-116), r.NodeSeconds, 0.11)
	loop.Nodes.DisruptionBudget = 0
	r = Simulate(tr, p, loop, 1)
	assert.Equal(t, []NodesAt{{0, 5}, {41 * s, 1}}, r.NodeCounts)
	// A sandbox that lands on a node being removed keeps it: a pool that drops to 1 at 15 s
	// and rises to 2 at 45 s puts the new sandbox on the one empty node left (the other three
	// are gone by then only without a budget).
	loop.Nodes.DisruptionBudget = DefaultDisruptionBudget
	p.Desired = func(d Demand) float64 {
		if d.At >= 45*time.Second {
			return 2
		}
		return 1
	}
	r = Simulate(tr, p, loop, 1)
	assert.Equal(t, []NodesAt{{0, 5}, {41 * s, 4}, {66 * s, 3}, {91 * s, 2}}, r.NodeCounts,
		"the node that takes the sandbox at 45 s stays; the other two empty ones go one at a time")
}

func TestNodesStaySpreadAfterTheBusyHour(t *testing.T) {
	// 24 claims, one every 5 s from 20 s, each held 2 minutes, on an autoscaled pool of held + 4
	// on nodes of 4: the pool and its claims rise onto 13 nodes. Once every claim is gone the pool
	// is back at 4, one node's worth; but its replacements were spread and its shrink took the
	// newest sandboxes wherever they ran, so its 4 rest on 3 nodes, and no node that holds one
	// goes. Packed (each sandbox on the fullest node), the pool would leave 1.
	loop := DefaultLoop()
	loop.Nodes = AutoModeNodes(4, 45*time.Second, 30*time.Second)
	var at []time.Duration
	for i := range 24 {
		at = append(at, 20*time.Second+time.Duration(i)*5*time.Second)
	}
	tr := nodeTrace(900*time.Second, 120*time.Second, at...)
	p := Policy{Floor: 4, Max: 40, Desired: func(d Demand) float64 { return float64(d.Held + 4) }, ScaleDown: components.DefaultScaleDown()}
	r := Simulate(tr, p, loop, 1)
	peak := 0
	for _, n := range r.NodeCounts {
		peak = max(peak, n.Nodes)
	}
	assert.Equal(t, 13, peak)
	assert.Equal(t, 4, r.Sizes[len(r.Sizes)-1].Replicas, "the pool back at rest")
	assert.Equal(t, 3, r.NodeCounts[len(r.NodeCounts)-1].Nodes, "the pool's 4 at rest, spread over 3 nodes")
}

func TestClaimsAdoptFromTheNodeWithTheMostWarm(t *testing.T) {
	a, b := &modelNode{}, &modelNode{}
	ready := []warmSandbox{{a, 0}, {b, time.Second}, {b, 2 * time.Second}, {a, 3 * time.Second}, {b, 4 * time.Second}}
	assert.Equal(t, 1, adoptable(ready), "b holds 3 of the 5: its first to be Ready")
	assert.Equal(t, 0, adoptable(ready[:4]), "2 each: the first to be Ready, on a")
	assert.Equal(t, 0, adoptable([]warmSandbox{{nil, 0}, {nil, time.Second}}), "no nodes: the first to be Ready")
	for _, w := range ready {
		assert.Zero(t, w.node.readyHere, "the count is left at 0 for the next claim")
	}
}

func TestPoolShrinksNewestFirst(t *testing.T) {
	ready := []warmSandbox{{nil, 5 * time.Second}, {nil, 9 * time.Second}, {nil, 3 * time.Second}}
	assert.Equal(t, 1, newest(ready))
	booting := []bootingSandbox{{at: 10 * time.Second, warmSandbox: warmSandbox{created: 4 * time.Second}},
		{at: 11 * time.Second, warmSandbox: warmSandbox{created: 7 * time.Second}}, {at: 12 * time.Second, warmSandbox: warmSandbox{created: 6 * time.Second}}}
	assert.Equal(t, 1, newestBooting(booting), "created last, though not the last Ready")
}

// The cluster's scheduler retries its pending sandboxes at the other pods' events (each a failed
// try: its backoff grows) and when a slot is free, and binds them in its queue's order.
func TestSchedulerRetriesAtTheClustersEvents(t *testing.T) {
	full := &modelNode{used: 1}
	cfg := SchedulerBackoff(Nodes{SlotsPerNode: 1})
	cfg.SharedRequeues = []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second}
	none := func(int, *modelNode) { t.Fatal("no slot: nothing may bind") }
	at := func(cfg Nodes) *modelCluster {
		c := newModelCluster(cfg)
		c.nodes = []*modelNode{full}
		c.enqueue(0, 1*time.Second) // claim 0 pending since 1 s
		c.retry(3*time.Second, none)
		c.retry(19*time.Second, none) // the requeues at 5, 10 and 15 s: claim 0 backs off 8 s
		c.enqueue(1, 20*time.Second)
		return c
	}
	bindsAt := func(c *modelCluster, t time.Duration) []int {
		var got []int
		full.used = 0
		c.retry(t, func(claim int, _ *modelNode) { got = append(got, claim) })
		full.used = 1
		return got
	}
	assert.Equal(t, []int{1}, bindsAt(at(cfg), 21500*time.Millisecond), "claim 0 backs off to 23 s, claim 1's is over at 21 s")
	noEvents := cfg
	noEvents.SharedRequeues = nil
	assert.Equal(t, []int{0}, bindsAt(at(noEvents), 21500*time.Millisecond), "no events: both over their backoff, the older failure first")
	fcfb := cfg
	fcfb.PodBackoff, fcfb.PodMaxBackoff = 0, 0
	assert.Equal(t, []int{0}, bindsAt(at(fcfb), 21500*time.Millisecond), "without a backoff: first come, first bound")

	c := at(cfg)
	c.enqueue(-1, 20*time.Second)
	c.unqueueWarm()
	assert.Equal(t, 0, c.pendingWarm)
	assert.ElementsMatch(t, []int{0, 1}, c.pending.Order(0), "the warm one gone, the claims' kept")
}
