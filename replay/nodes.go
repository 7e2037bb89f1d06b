package replay

import (
	"math"
	"time"
)

// Nodes are the nodes the model's sandboxes run on, as EKS Auto Mode's Karpenter provides
// them: K sandbox slots per node, a node launched for sandboxes that find no free slot, Ready a
// launch delay later, and empty nodes removed after consolidateAfter. The zero value is today's
// model: nodes are always there.
type Nodes struct {
	// SlotsPerNode is K, the sandboxes one node holds. 0 is unbounded: every sandbox finds a slot
	// at once, no node is launched or removed, and no node cost is counted (the model before
	// nodes, figure for figure).
	SlotsPerNode int
	// LaunchDelay is D, a NodeClaim's launch to its node Ready: 24-30 s on a c6a.large
	// (awslabs/node-latency-for-k8s), about 30 s (aws/karpenter-provider-aws#4548), 80-100 s in
	// aws/karpenter-provider-aws#3102; the benchmark's model takes 45 s.
	LaunchDelay time.Duration
	// BatchIdle and BatchMax are Karpenter's provisioning batch window: it launches for the
	// pending pods once no new one has come for BatchIdle, or BatchMax after the first
	// (Karpenter's --batch-idle-duration, default 1s, and --batch-max-duration, default 10s:
	// sigs.k8s.io/karpenter pkg/operator/options, BATCH_IDLE_DURATION and BATCH_MAX_DURATION).
	BatchIdle, BatchMax time.Duration
	// SharedTriggers are when other pods on the same cluster became pending (other pools',
	// other workloads'), sorted. One Karpenter batches every pending pod of the cluster in one
	// window, so each of them keeps an open window open BatchIdle longer. None: the pool's own
	// pods alone (the advice's, which knows no other workload).
	SharedTriggers []time.Duration
	// ConsolidateAfter: a Ready node that has held no sandbox for this long is removed (the
	// NodePool's disruption.consolidateAfter; Auto Mode's general-purpose pool uses 30 s).
	ConsolidateAfter time.Duration
	// DisruptionDelay is what Karpenter adds after consolidateAfter before an empty node is gone:
	// its disruption loop finds the candidate (every 10 s), re-validates it 15 s later
	// (commandValidationDelay, v1.14.1 pkg/controllers/disruption) and the node then terminates.
	// TestLiveWarmPoolOnKarpenter read it: deletion 14.6-16.5 s and gone 20.4-22.1 s after
	// consolidateAfter (3 runs, e2e/README.md). A sandbox that lands on the node meanwhile keeps it.
	DisruptionDelay time.Duration
	// DisruptionBudget is the share of the pool's nodes Karpenter removes at once (the NodePool's
	// disruption budget; its default is `nodes: 10%`, rounded up, so one at a time below 10
	// nodes); 0 removes every empty node at once. DisruptionSpacing is, under the budget, the time
	// from one removal to the next: TestLiveWarmPoolOnKarpenter read the second of four emptied
	// nodes gone 25 s after the first (50.4-52.1 s against 25.4-27.1 s after they emptied).
	DisruptionBudget  float64
	DisruptionSpacing time.Duration
	// PodBackoff and PodMaxBackoff are kube-scheduler's backoff of a pod it could not place,
	// which decides which pending pod a freed slot goes to (PodQueue; SchedulerBackoff, which
	// AutoModeNodes takes). Zero: first come, first bound.
	PodBackoff, PodMaxBackoff time.Duration
	// SharedRequeues are when other pods of the cluster left their nodes, or other nodes became
	// Ready, sorted: each makes the scheduler try every pending pod again (NodeResourcesFit's
	// queueing hint for a deleted pod does not ask where it ran), a failed try that lengthens
	// their backoff. None: the pool's own events alone (the advice's, which knows no other
	// workload).
	SharedRequeues []time.Duration
}

// AutoModeNodes are EKS Auto Mode's nodes as the model takes them: K sandboxes per node, a
// launch delay and consolidateAfter of the team's, what Karpenter adds (its default batch
// window, the disruption delay the live run read and the NodePool's default disruption budget)
// and kube-scheduler's pod backoff, which decides who takes a freed slot.
func AutoModeNodes(k int, launchDelay, consolidateAfter time.Duration) Nodes {
	return SchedulerBackoff(Nodes{SlotsPerNode: k, LaunchDelay: launchDelay, BatchIdle: time.Second, BatchMax: 10 * time.Second,
		ConsolidateAfter: consolidateAfter, DisruptionDelay: LiveDisruptionDelay,
		DisruptionBudget: DefaultDisruptionBudget, DisruptionSpacing: LiveDisruptionSpacing})
}

// SchedulerBackoff is kube-scheduler's pod backoff (podInitialBackoffSeconds 1,
// podMaxBackoffSeconds 10) on nodes.
func SchedulerBackoff(nodes Nodes) Nodes {
	nodes.PodBackoff, nodes.PodMaxBackoff = time.Second, 10*time.Second
	return nodes
}

// GoalNodes are EKS Auto Mode as the benchmark's model takes it: K = 8, D = 45 s,
// consolidateAfter 30 s.
func GoalNodes() Nodes { return AutoModeNodes(8, 45*time.Second, 30*time.Second) }

// LiveDisruptionDelay is DisruptionDelay as TestLiveWarmPoolOnKarpenter read it (20.4-22.1 s).
const LiveDisruptionDelay = 21 * time.Second

// DefaultDisruptionBudget is a NodePool's default disruption budget, `nodes: 10%` (Karpenter
// v1.14.1, rounded up), which EKS Auto Mode's built-in pools keep.
const DefaultDisruptionBudget = 0.1

// LiveDisruptionSpacing is DisruptionSpacing as TestLiveWarmPoolOnKarpenter read it (25 s).
const LiveDisruptionSpacing = 25 * time.Second

// modelNode is one node: launched, Ready at readyAt, holding used sandboxes (warm, booting or
// claimed), empty since emptySince when used is 0.
type modelNode struct {
	launched, readyAt time.Duration
	used              int
	emptySince        time.Duration
	// removing: Karpenter is removing the node (it was empty, and the budget had room); it is
	// gone at removedAt unless a sandbox lands on it first.
	removing  bool
	removedAt time.Duration
	// readyHere counts the pool's Ready sandboxes on the node while a claim picks one (adoptable).
	readyHere int
}

// modelCluster is the nodes, the scheduler's queue and Karpenter's provisioning and
// consolidation, in the model's time.
type modelCluster struct {
	cfg   Nodes
	nodes []*modelNode
	// pending is the sandboxes that found no free slot, waiting in the scheduler's queue: a
	// claim's cold one (its claim's index) or a warm one of the pool (-1).
	pending     PodQueue[int]
	pendingWarm int
	// Karpenter's batch window: open since batchStart, last pod added at lastTrigger.
	batching                bool
	batchStart, lastTrigger time.Duration
	triggered               bool // a pod became pending since the last provisioning pass
	nextShared              int  // the first of cfg.SharedTriggers not yet passed
	nextRequeue             int  // the first of cfg.SharedRequeues not yet passed
	launched                int
	// nextRemoval is the earliest a removal may start under the budget (DisruptionSpacing after
	// the last one ended).
	nextRemoval time.Duration
	// changed says a node was added or a sandbox placed or freed since consolidate last ran;
	// wake is the first time consolidate can do anything otherwise. Between the two it is
	// skipped: a replay steps every 100 ms, and scanning every node at each step was most of a
	// large history's cost.
	changed bool
	wake    time.Duration
}

// newModelCluster is an empty cluster of cfg's nodes, its scheduler's queue with cfg's backoff.
func newModelCluster(cfg Nodes) *modelCluster {
	return &modelCluster{cfg: cfg, pending: NewPodQueue[int](cfg)}
}

func (c *modelCluster) bounded() bool { return c.cfg.SlotsPerNode > 0 }

// place binds a new sandbox at t to the Ready node with a free slot that holds the fewest
// sandboxes: the scheduler's default scoring, NodeResourcesFit's LeastAllocated, which EKS keeps,
// spreads pods of equal requests that way. Ties go to the oldest node (the scheduler draws among
// equal scores). Spread is what keeps nodes from emptying: a pool that shrinks leaves one or two
// sandboxes on each node, and Karpenter removes no node that holds one (consolidate). Unbounded:
// always a slot, on no node (nil).
func (c *modelCluster) place(t time.Duration) (*modelNode, bool) {
	if !c.bounded() {
		return nil, true
	}
	var best *modelNode
	for _, n := range c.nodes {
		if n.readyAt <= t && n.used < c.cfg.SlotsPerNode && (best == nil || n.used < best.used) {
			best = n
		}
	}
	if best == nil {
		return nil, false
	}
	best.used++
	c.changed = true
	return best, true
}

// initial places the pool's n sandboxes at the trace's start on the nodes they need, there and
// Ready (the benchmark waits for the pool to be Ready, nodes included), spread as the scheduler
// spreads them. Unbounded: n sandboxes on no node.
func (c *modelCluster) initial(n int) []*modelNode {
	if c.bounded() {
		for range (n + c.cfg.SlotsPerNode - 1) / c.cfg.SlotsPerNode {
			c.nodes = append(c.nodes, &modelNode{})
		}
	}
	out := make([]*modelNode, n)
	for i := range out {
		out[i], _ = c.place(0)
	}
	return out
}

// free takes a sandbox off its node at t.
func (c *modelCluster) free(n *modelNode, t time.Duration) {
	if n == nil {
		return
	}
	n.used--
	if n.used == 0 {
		n.emptySince = t
	}
	c.changed = true
}

// enqueue queues a sandbox that found no slot at t: a claim's (claim >= 0) or the pool's (-1).
func (c *modelCluster) enqueue(claim int, t time.Duration) {
	c.pending.Add(claim, t)
	if claim < 0 {
		c.pendingWarm++
	}
	c.triggered = true
}

// retry is the scheduler at t: each event that can make room (another pod of the cluster gone,
// cfg.SharedRequeues, up to t) and then a slot free now make it try every pending sandbox and
// bind each it can to a free slot (bound is told).
func (c *modelCluster) retry(t time.Duration, bound func(claim int, n *modelNode)) {
	for c.nextRequeue < len(c.cfg.SharedRequeues) && c.cfg.SharedRequeues[c.nextRequeue] <= t {
		c.round(c.cfg.SharedRequeues[c.nextRequeue], t, bound)
		c.nextRequeue++
	}
	if c.pending.Len() > 0 && c.slotFree(t) {
		c.round(t, t, bound)
	}
}

// round tries every pending sandbox once, as an event at at makes the scheduler (in the model's
// step t).
func (c *modelCluster) round(at, t time.Duration, bound func(claim int, n *modelNode)) {
	full := false
	c.pending.Retry(at, func(claim int) bool {
		if full {
			return false
		}
		n, ok := c.place(t)
		if !ok {
			full = true
			return false
		}
		if claim < 0 {
			c.pendingWarm--
		}
		bound(claim, n)
		return true
	})
}

// slotFree reports whether a Ready node has a free slot at t.
func (c *modelCluster) slotFree(t time.Duration) bool {
	if !c.bounded() {
		return true
	}
	for _, n := range c.nodes {
		if n.readyAt <= t && n.used < c.cfg.SlotsPerNode {
			return true
		}
	}
	return false
}

// unqueueClaim drops a claim's pending sandbox (the claim was deleted before it had a slot).
func (c *modelCluster) unqueueClaim(claim int) {
	c.pending.Remove(func(p int) bool { return p == claim })
}

// unqueueWarm drops the newest pending warm sandbox (a scale-down deletes unscheduled pods
// first, newest first, as a ReplicaSet does).
func (c *modelCluster) unqueueWarm() {
	if c.pending.RemoveNewest(func(p int) bool { return p < 0 }) {
		c.pendingWarm--
	}
}

// provision is Karpenter's provisioner at t: pending pods that the launching nodes will not hold
// open a batch window; when it closes (BatchIdle without a new pending pod, the pool's or
// another's on the cluster, or BatchMax after it opened) Karpenter launches the nodes they
// need, Ready LaunchDelay later.
func (c *modelCluster) provision(t time.Duration) {
	if !c.bounded() {
		return
	}
	shared := false // another pod of the cluster became pending since the last pass
	for c.nextShared < len(c.cfg.SharedTriggers) && c.cfg.SharedTriggers[c.nextShared] <= t {
		shared = true
		c.nextShared++
	}
	if c.pending.Len() == 0 { // nothing to cover: the scan below would find uncovered <= 0
		c.triggered, c.batching = false, false
		return
	}
	uncovered := c.pending.Len()
	for _, n := range c.nodes {
		if n.readyAt > t {
			uncovered -= c.cfg.SlotsPerNode - n.used
		}
	}
	triggered := c.triggered || shared
	c.triggered = false
	if uncovered <= 0 {
		c.batching = false
		return
	}
	switch {
	case !c.batching:
		c.batching, c.batchStart, c.lastTrigger = true, t, t
	case triggered:
		c.lastTrigger = t
	}
	if t-c.lastTrigger < c.cfg.BatchIdle && t-c.batchStart < c.cfg.BatchMax {
		return
	}
	for i := 0; i < (uncovered+c.cfg.SlotsPerNode-1)/c.cfg.SlotsPerNode; i++ {
		ready := t + c.cfg.LaunchDelay
		c.nodes = append(c.nodes, &modelNode{launched: t, readyAt: ready, emptySince: ready})
		c.launched++
		c.changed = true
	}
	c.batching = false
}

// consolidate removes the Ready nodes that have held no sandbox for ConsolidateAfter and the
// DisruptionDelay, at most DisruptionBudget of the nodes at once (every empty one when 0). Warm
// and claimed sandboxes carry karpenter.sh/do-not-disrupt (the blueprint's template sets it), so
// Karpenter never drains a node that holds one, not even to pack it onto another (consolidation
// WhenEmptyOrUnderutilized may want to): only an empty node goes, and the model moves no sandbox.
// A sandbox that lands on a node being removed keeps it.
func (c *modelCluster) consolidate(t time.Duration) {
	if !c.changed && t < c.wake {
		return
	}
	c.changed = false
	removing, budget := c.consolidateAt(t)
	c.wake = c.nextWake(t, removing, budget)
}

// nextWake is the first time after t consolidate can change anything if no node is added and no
// sandbox placed or freed: a removal ending, or an empty node becoming eligible while the budget
// has room.
func (c *modelCluster) nextWake(t time.Duration, removing, budget int) time.Duration {
	wake := time.Duration(math.MaxInt64)
	for _, n := range c.nodes {
		switch {
		case n.removing:
			wake = min(wake, n.removedAt)
		case removing < budget && n.used == 0:
			wake = min(wake, max(c.nextRemoval, n.readyAt, n.emptySince+c.cfg.ConsolidateAfter))
		}
	}
	return max(wake, t+1)
}

// consolidateAt is one pass of consolidate at t; it returns the nodes being removed and the
// budget after it.
func (c *modelCluster) consolidateAt(t time.Duration) (removing, budget int) {
	kept := c.nodes[:0]
	for _, n := range c.nodes {
		if n.removing && n.used > 0 {
			n.removing = false
		}
		if n.removing {
			if t >= n.removedAt {
				c.nextRemoval = t + c.cfg.DisruptionSpacing - c.cfg.DisruptionDelay
				continue
			}
			removing++
		}
		kept = append(kept, n)
	}
	c.nodes = kept
	budget = len(c.nodes) // no budget: every empty node at once
	if c.cfg.DisruptionBudget > 0 {
		budget = int(math.Ceil(c.cfg.DisruptionBudget * float64(len(c.nodes))))
	}
	for removing < budget && t >= c.nextRemoval {
		// The node empty the longest goes first.
		var next *modelNode
		for _, n := range c.nodes {
			if !n.removing && n.readyAt <= t && n.used == 0 && t-n.emptySince >= c.cfg.ConsolidateAfter &&
				(next == nil || n.emptySince < next.emptySince) {
				next = n
			}
		}
		if next == nil {
			return removing, budget
		}
		next.removing, next.removedAt = true, t+c.cfg.DisruptionDelay
		removing++
	}
	// A removal that ends in this step (no delay) leaves at once.
	if c.cfg.DisruptionDelay == 0 {
		c.consolidateNow(t)
		removing = 0
		for _, n := range c.nodes {
			if n.removing {
				removing++
			}
		}
	}
	return removing, budget
}

// consolidateNow drops the nodes whose removal ends at t.
func (c *modelCluster) consolidateNow(t time.Duration) {
	kept := c.nodes[:0]
	for _, n := range c.nodes {
		if n.removing && n.used == 0 && t >= n.removedAt {
			continue
		}
		kept = append(kept, n)
	}
	c.nodes = kept
}

// needed is the nodes held claims need: ceil(held/K).
func (c *modelCluster) needed(held int) int {
	return int(math.Ceil(float64(held) / float64(c.cfg.SlotsPerNode)))
}
