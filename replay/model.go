package replay

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// The model replays a trace against a pool in simulated time: the
// agent-sandbox controller's refill, a claim's adoption of a warm sandbox,
// the exporter's arrival windows and the HPA's sync, each with the delays the
// live benchmark has. It is how a sizing rule is chosen before the 45-minute
// live run measures it, and how the rule's verdict is checked on many seeds
// the live run has no time for. It knows nothing the live run measures: a
// disagreement between the two is a finding about the model.

// Loop are the loop's delays.
type Loop struct {
	// Boot: a sandbox is Ready uniformly within (Boot-1s, Boot] of its create
	// (e2e/bursts' BootDelay, KWOK's stage).
	Boot time.Duration
	// AdoptGrace: a claim that finds no Ready warm sandbox waits this long for
	// a booting one before it starts its own, cold.
	AdoptGrace time.Duration
	// HPASync: the HPA reads the metric and writes spec.replicas this often;
	// KEDA's adapter computes the metric on the HPA's read.
	HPASync time.Duration
	// Tolerance: the HPA leaves the size when desired/current is within it.
	Tolerance float64
	// Nodes the sandboxes run on; the zero value: always there (nodes.go).
	Nodes Nodes
	// Syncs are the HPA's syncs, from the trace's start, when they are known; after the last
	// (or from the start, when there are none) it syncs every HPASync. An HPA syncs on a clock of
	// its own, started with its ScaledObject and slowed by each sync's own time, so where a burst
	// falls between two syncs is chance: a replay of a live run syncs when its HPA did.
	Syncs []time.Duration
	// Served, when known, is what the exporter served the HPA at a sync of Syncs (keyed by the
	// sync's time): the HPA decides on those counts instead of the model's count of the trace.
	// A live exporter sees a claim a moment after its client created or deleted it, so at a
	// burst the two part by a claim or two; a replay of a live run reads what its HPA was served.
	Served map[time.Duration]Demand
	// Wall, when set, is the live harness's clock: the API server keeps a claim's creation and a
	// pod's binding in whole seconds, so a claim's grace ends AdoptGrace after its creation's
	// second, and a sandbox is Ready Boot after its binding's second (KWOK's boot stage); nil:
	// the model's own (a boot drawn within (Boot-1s, Boot], the grace from the arrival), as on
	// EKS, where the seconds fall anywhere.
	Wall *WallClock
	// AdoptRetry is how often a claim waiting out its grace looks for a Ready warm sandbox
	// (agent-sandbox v0.5.6: every 500 ms); 0: at once.
	AdoptRetry time.Duration
	// ClaimReady is how long after its sandbox is Ready a claim is seen Ready (agent-sandbox's
	// claim controller adopts, then the client's watch sees it): a warm claim's whole wait. The
	// live day measures it; zero (the advice's) counts a claim's wait from its sandbox alone.
	ClaimReady time.Duration
	// CreateLag is how long after the pool falls short (a claim adopted one of its sandboxes, or
	// spec.replicas rose) its new sandbox is there to be scheduled: the warm pool controller sees
	// the change and creates a Sandbox, whose controller creates its pod. Until then no node is
	// launched for it and its boot has not begun. The live day measures it; zero (the advice's)
	// creates at once.
	CreateLag time.Duration
}

// DefaultLoop is the live benchmark's loop.
func DefaultLoop() Loop {
	return Loop{Boot: 6 * time.Second, AdoptGrace: 2 * time.Second, HPASync: HPASyncPeriod, Tolerance: 0.1}
}

// WallClock places a trace on the wall clock: Offset is how far past a whole second the
// trace's start was.
type WallClock struct {
	Offset time.Duration `json:"offset"`
}

// second is the whole second of the wall clock that trace time t falls in, in trace time.
func (w WallClock) second(t time.Duration) time.Duration {
	return (t + w.Offset).Truncate(time.Second) - w.Offset
}

// HPASyncPeriod is EKS's HPA sync period, the one every policy of the live run and the model
// runs under.
const HPASyncPeriod = 15 * time.Second

// Demand is what the exporter serves at one moment: the claims held and
// those created within each arrival window (deleted ones included).
type Demand struct {
	Held                        int
	ArrivalsShort, ArrivalsLong int
	// At is the sync's time in the trace (a schedule's clock).
	At time.Duration
	// Clock is the sync's clock time, the trace's Start plus At; zero when the trace has no
	// Start.
	Clock time.Time
}

// Policy sizes a pool. Fixed > 0 is a fixed pool of that size;
// otherwise Desired maps the exporter's reading to the HPA's desired
// replicas, bounded by [Floor, Max].
type Policy struct {
	Name         string
	Fixed        int
	Desired      func(Demand) float64
	Floor, Max   int
	Short, Long  time.Duration // the arrival windows Desired reads
	InitialScale int           // spec.replicas when the trace starts (Floor when 0)
	// ScaleUp and ScaleDown are the HPA's behaviour as the program renders it; the zero value
	// changes in one sync.
	ScaleUp, ScaleDown components.ScalingRules
	// KubernetesScaleUp replays Kubernetes' default scale-up policies instead of ScaleUp (the
	// larger of 4 pods or 100 % per 15 s): what an HPA whose scale-up names no policy runs.
	KubernetesScaleUp bool
}

// Result is one policy's outcome on one trace.
type Result struct {
	Claims, WarmHits int
	// IdleWarmPodSeconds integrates the Ready sandboxes no claim holds.
	IdleWarmPodSeconds float64
	// Sizes are the pool's spec.replicas over the trace, one entry per change.
	Sizes []SizeAt

	// Waits is each claim's wait for its sandbox, in arrival order: 0 for a Ready warm one, the
	// rest of its boot for one adopted within the grace, a boot for a cold one, and before that
	// the wait for a slot when no node had one (a node launch and the batch window). A claim
	// deleted before its sandbox was Ready waited its whole lifetime; NeverReady counts those.
	Waits      []time.Duration
	NeverReady int
	// Warm is whether each claim found a warm sandbox, in arrival order.
	Warm []bool
	// NodeSeconds integrates the nodes that exist, launching ones included (what EKS bills);
	// IdleNodeSeconds those beyond the ceil(held/K) nodes the claims held need. Both 0 when
	// nodes are unbounded (Nodes.SlotsPerNode 0).
	NodeSeconds, IdleNodeSeconds float64
	NodesLaunched                int
	// NodeCounts are the nodes that exist over the trace, launching ones included, one entry per
	// change (none when nodes are unbounded).
	NodeCounts []NodesAt
}

// SizeAt is the pool's spec.replicas from At on.
type SizeAt struct {
	At       time.Duration
	Replicas int
}

// NodesAt is the number of nodes from At on.
type NodesAt struct {
	At    time.Duration
	Nodes int
}

// WarmShare is the share of claims that found a warm sandbox.
func (r Result) WarmShare() float64 {
	if r.Claims == 0 {
		return 0
	}
	return float64(r.WarmHits) / float64(r.Claims)
}

// Simulate replays tr against p in steps of 100 ms. rngSeed draws the boot
// times, so two policies on one seed see the same boots in the same order.
func Simulate(tr *Trace, p Policy, loop Loop, rngSeed uint64) Result {
	const step = 100 * time.Millisecond
	rng := rand.New(rand.NewPCG(rngSeed, rngSeed^0x2545f4914f6cdd1d))
	// readyAt is when a warm sandbox bound to its node at t is Ready.
	readyAt := func(t time.Duration) time.Duration {
		if loop.Wall != nil {
			return loop.Wall.second(t) + loop.Boot
		}
		return t + loop.Boot - time.Duration(rng.Float64()*float64(time.Second))
	}
	// Cold sandboxes draw their boots from a stream of their own, so the pool's boots are the
	// same draws whatever the claims' waits are.
	coldRng := rand.New(rand.NewPCG(rngSeed^0x9e3779b97f4a7c15, rngSeed))
	coldReadyAt := func(t time.Duration) time.Duration {
		if loop.Wall != nil {
			return loop.Wall.second(t) + loop.Boot
		}
		return t + loop.Boot - time.Duration(coldRng.Float64()*float64(time.Second))
	}
	// adoptsAt is when a claim arriving at at adopts a warm sandbox Ready at ready, if within
	// its grace: at its first look after the sandbox is Ready.
	adoptsAt := func(at, ready time.Duration) (time.Duration, bool) {
		deadline := at + loop.AdoptGrace
		if loop.Wall != nil {
			deadline = loop.Wall.second(at) + loop.AdoptGrace
		}
		look := max(ready, at)
		if loop.AdoptRetry > 0 && look > at {
			look = at + time.Duration(math.Ceil(float64(look-at)/float64(loop.AdoptRetry)))*loop.AdoptRetry
		}
		if loop.Wall != nil || loop.AdoptRetry > 0 {
			return look, look < deadline
		}
		return look, look <= deadline
	}
	cluster := newModelCluster(loop.Nodes)
	replicas := p.Fixed
	if p.Fixed == 0 {
		replicas = max(p.Floor, p.InitialScale)
	}
	// The pool starts Ready at its size, as the benchmark waits for it.
	var ready []warmSandbox // each Ready unclaimed sandbox, in the order it became Ready
	for _, n := range cluster.initial(replicas) {
		ready = append(ready, warmSandbox{node: n})
	}
	res := Result{Sizes: []SizeAt{{0, replicas}}, Waits: make([]time.Duration, len(tr.Arrivals)), Warm: make([]bool, len(tr.Arrivals))}
	var booting []bootingSandbox // each unclaimed booting sandbox, by ready-at ascending
	var creating []time.Duration // when each sandbox the controller created is there, ascending
	next := 0
	var deletes deletionHeap // the arrived claims' deletions, soonest first
	deleted := 0             // arrived claims deleted by the last sync
	// The claims' sandboxes, and the claims by their deletion.
	type claimSandbox struct {
		node    *modelNode
		pending bool
	}
	claims := make([]claimSandbox, len(tr.Arrivals))
	byEnd := make([]int, len(tr.Arrivals))
	for i := range byEnd {
		byEnd[i] = i
	}
	sort.SliceStable(byEnd, func(i, j int) bool {
		a, b := tr.Arrivals[byEnd[i]], tr.Arrivals[byEnd[j]]
		return a.At+a.Lifetime < b.At+b.Lifetime
	})
	ended, heldNow := 0, 0
	// never marks the claims deleted before their sandbox was Ready.
	never := make([]bool, len(tr.Arrivals))
	// bind gives pending sandboxes the free slots, in the order the scheduler tries them
	// (modelCluster.retry): a warm one starts its boot, a claim's cold one too (its claim's wait runs to
	// its Ready). Those tried and not placed back off again.
	bind := func(t time.Duration) {
		cluster.retry(t, func(c int, n *modelNode) {
			if c < 0 {
				booting = insertSorted(booting, bootingSandbox{readyAt(t), warmSandbox{n, t}})
				return
			}
			a := tr.Arrivals[c]
			claims[c] = claimSandbox{node: n}
			res.Waits[c] = coldReadyAt(max(t, a.At)) - a.At // bound in its arrival's step: a boot
			if res.Waits[c] > a.Lifetime {
				res.Waits[c] = a.Lifetime
				never[c] = true
			}
		})
	}
	var hpa modelHPA
	syncs := loop.Syncs
	nextSync := loop.HPASync
	if len(syncs) > 0 {
		nextSync, syncs = syncs[0], syncs[1:]
	}
	due := nextSync                          // the sync's own time, which Served is keyed by
	end := max(tr.Duration, tr.End()) + step // the arrivals, then the last claim's lifetime
	for t := time.Duration(0); t < end; t += step {
		// Claims are deleted: a claim's sandbox leaves its node; one still waiting for a slot
		// leaves the queue, its claim never served.
		for ended < len(byEnd) && tr.Arrivals[byEnd[ended]].At+tr.Arrivals[byEnd[ended]].Lifetime <= t {
			c := byEnd[ended]
			if c >= next {
				break // not arrived yet (a lifetime shorter than a step): deleted once it has
			}
			ended++
			heldNow--
			if claims[c].pending {
				cluster.unqueueClaim(c)
				res.Waits[c] = tr.Arrivals[c].Lifetime
				never[c] = true
				continue
			}
			cluster.free(claims[c].node, t)
		}
		// Launched nodes that are Ready now, and slots freed, take pending sandboxes.
		bind(t)
		// Sandboxes finish booting.
		for len(booting) > 0 && booting[0].at <= t {
			ready = append(ready, booting[0].warmSandbox)
			booting = booting[1:]
		}
		// Claims arrive and adopt a warm sandbox, Ready now or within the grace; the rest start
		// cold, on a free slot or, when none is left, on a node launched for them.
		for next < len(tr.Arrivals) && tr.Arrivals[next].At < t+step {
			a := tr.Arrivals[next]
			c := next
			next++
			res.Claims++
			heldNow++
			deletes.push(a.At + a.Lifetime)
			var look time.Duration
			inGrace := false
			if len(ready) == 0 && len(booting) > 0 {
				look, inGrace = adoptsAt(a.At, booting[0].at)
			}
			switch {
			case len(ready) > 0:
				i := adoptable(ready)
				claims[c].node = ready[i].node
				ready = append(ready[:i], ready[i+1:]...)
				res.WarmHits++
				res.Warm[c] = true
			case inGrace:
				claims[c].node = booting[0].node
				res.Waits[c] = look - a.At
				booting = booting[1:]
				res.WarmHits++
				res.Warm[c] = true
			default:
				if n, ok := cluster.place(t); ok {
					claims[c].node = n
					res.Waits[c] = coldReadyAt(a.At) - a.At
				} else {
					claims[c].pending = true
					cluster.enqueue(c, t)
				}
			}
		}
		// The HPA syncs.
		if p.Fixed == 0 && t >= nextSync {
			served, isServed := loop.Served[due]
			if len(syncs) > 0 {
				due, syncs = syncs[0], syncs[1:]
				nextSync = max(due, t+step)
			} else {
				nextSync += loop.HPASync
				due = nextSync
			}
			deleted += deletes.popThrough(t)
			d := Demand{Held: deletes.pushed - deleted, ArrivalsShort: arrivedWithin(tr, t, p.Short), ArrivalsLong: arrivedWithin(tr, t, p.Long), At: t, Clock: tr.Clock(t)}
			if isServed {
				d.Held, d.ArrivalsShort, d.ArrivalsLong = served.Held, served.ArrivalsShort, served.ArrivalsLong
			}
			if n := hpa.sync(t, replicas, p.Desired(d), p, loop.Tolerance); n != replicas {
				hpa.scaled(t, n-replicas)
				replicas = n
				res.Sizes = append(res.Sizes, SizeAt{t, n})
			}
		}
		// The controller keeps ready + booting (+ pending, on no node yet; + created, not yet
		// there to schedule) at spec.replicas: it creates the missing ones and deletes the
		// surplus, the unready first, newest first within each (agent-sandbox v0.5.6,
		// sandboxwarmpool_controller.go: "unready sandboxes before ready ones, then newest
		// first"), wherever they run. A sandbox created CreateLag ago is there now.
		create := func() {
			if n, ok := cluster.place(t); ok {
				booting = insertSorted(booting, bootingSandbox{readyAt(t), warmSandbox{n, t}})
			} else {
				cluster.enqueue(-1, t)
			}
		}
		for len(creating) > 0 && creating[0] <= t {
			creating = creating[1:]
			create()
		}
		for len(ready)+len(booting)+cluster.pendingWarm+len(creating) < replicas {
			if loop.CreateLag > 0 {
				creating = append(creating, t+loop.CreateLag)
				continue
			}
			create()
		}
		for len(ready)+len(booting)+cluster.pendingWarm+len(creating) > replicas {
			switch {
			case len(creating) > 0:
				creating = creating[:len(creating)-1]
			case cluster.pendingWarm > 0:
				cluster.unqueueWarm()
			case len(booting) > 0:
				i := newestBooting(booting)
				cluster.free(booting[i].node, t)
				booting = append(booting[:i], booting[i+1:]...)
			default:
				i := newest(ready)
				cluster.free(ready[i].node, t)
				ready = append(ready[:i], ready[i+1:]...)
			}
		}
		// Karpenter launches for what is still pending; a node launched Ready at once (D = 0)
		// takes it in this step; empty nodes go.
		bind(t)
		cluster.provision(t)
		bind(t)
		cluster.consolidate(t)
		res.IdleWarmPodSeconds += float64(len(ready)) * step.Seconds()
		if cluster.bounded() {
			if n := len(res.NodeCounts); n == 0 || res.NodeCounts[n-1].Nodes != len(cluster.nodes) {
				res.NodeCounts = append(res.NodeCounts, NodesAt{t, len(cluster.nodes)})
			}
			res.NodeSeconds += float64(len(cluster.nodes)) * step.Seconds()
			res.IdleNodeSeconds += float64(max(len(cluster.nodes)-cluster.needed(heldNow), 0)) * step.Seconds()
		}
	}
	res.NodesLaunched = cluster.launched
	// The client sees a claim Ready ClaimReady after its sandbox; one deleted before then was
	// never seen Ready.
	for c, a := range tr.Arrivals {
		if w := res.Waits[c] + loop.ClaimReady; !never[c] && w > a.Lifetime {
			never[c] = true
			res.Waits[c] = a.Lifetime
		} else if !never[c] {
			res.Waits[c] = w
		}
		if never[c] {
			res.NeverReady++
		}
	}
	return res
}

// warmSandbox is one of the pool's unclaimed sandboxes: its node (nil when nodes are unbounded)
// and its creation.
type warmSandbox struct {
	node    *modelNode
	created time.Duration
}

// bootingSandbox is an unclaimed sandbox booting, Ready at at.
type bootingSandbox struct {
	at time.Duration
	warmSandbox
}

// adoptable is the Ready sandbox a claim adopts: one on the node that holds the most of the
// pool's Ready sandboxes, the first to become Ready among those (agent-sandbox v0.5.6's claim
// controller, getCandidate's NodeSpread: "the node with the most remaining sandboxes has been
// selected the least", ties oldest first). Unbounded: the first to become Ready.
func adoptable(ready []warmSandbox) int {
	if ready[0].node == nil {
		return 0
	}
	for _, w := range ready {
		w.node.readyHere++
	}
	best := 0
	for i, w := range ready {
		if w.node.readyHere > ready[best].node.readyHere {
			best = i
		}
	}
	for _, w := range ready {
		w.node.readyHere = 0
	}
	return best
}

// newest is the index of the sandbox created last (the last such).
func newest(ready []warmSandbox) int {
	return newestOf(ready, func(w warmSandbox) time.Duration { return w.created })
}

// newestBooting is the index of the booting sandbox created last (the last such).
func newestBooting(booting []bootingSandbox) int {
	return newestOf(booting, func(b bootingSandbox) time.Duration { return b.created })
}

func newestOf[T any](s []T, created func(T) time.Duration) int {
	best := 0
	for i, v := range s {
		if created(v) >= created(s[best]) {
			best = i
		}
	}
	return best
}

// deletionHeap holds the arrived claims' deletion times, soonest first, so a sync counts the
// claims held in O(log n) per deletion rather than scanning every claim so far: the HPA's
// syncs times the claims was what a day of a large platform cost.
type deletionHeap struct {
	at     []time.Duration
	pushed int
}

func (h *deletionHeap) push(d time.Duration) {
	h.pushed++
	h.at = append(h.at, d)
	for i := len(h.at) - 1; i > 0; {
		parent := (i - 1) / 2
		if h.at[parent] <= h.at[i] {
			break
		}
		h.at[parent], h.at[i] = h.at[i], h.at[parent]
		i = parent
	}
}

// popThrough removes the deletions at or before t (a claim deleted at t is no longer held at
// t) and says how many.
func (h *deletionHeap) popThrough(t time.Duration) int {
	n := 0
	for len(h.at) > 0 && h.at[0] <= t {
		last := len(h.at) - 1
		h.at[0] = h.at[last]
		h.at = h.at[:last]
		for i := 0; ; {
			small, l, r := i, 2*i+1, 2*i+2
			if l < len(h.at) && h.at[l] < h.at[small] {
				small = l
			}
			if r < len(h.at) && h.at[r] < h.at[small] {
				small = r
			}
			if small == i {
				break
			}
			h.at[i], h.at[small] = h.at[small], h.at[i]
			i = small
		}
		n++
	}
	return n
}

// arrivedWithin counts the claims created in (t-window, t]: the trace is sorted by At, so two
// binary searches.
func arrivedWithin(tr *Trace, t, window time.Duration) int {
	if window <= 0 {
		return 0
	}
	after := func(cut time.Duration) int {
		return sort.Search(len(tr.Arrivals), func(i int) bool { return tr.Arrivals[i].At > cut })
	}
	return after(t) - after(t-window)
}

func insertSorted(s []bootingSandbox, v bootingSandbox) []bootingSandbox {
	i := len(s)
	for i > 0 && s[i-1].at > v.at {
		i--
	}
	s = append(s, bootingSandbox{})
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// modelHPA is the HPA controller's memory of one pool: its recent recommendations (for the
// stabilization windows) and its recent scale events (for the rate policies), as
// kube-controller-manager v1.36 keeps them (pkg/controller/podautoscaler/horizontal.go:
// stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate,
// calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors). Both are kept
// only as far back as a window or a period reaches, so a sync costs the same on the last day of
// a long history as on the first.
type modelHPA struct {
	recs   []modelEvent // recommendation per sync
	events []modelEvent // replica change per scale
}

type modelEvent struct {
	at time.Duration
	n  int
}

// hpaRules is one direction of the HPA's behaviour with its defaults filled in.
type hpaRules struct {
	window   time.Duration
	policies []components.ScalingRules // resolved; the select policy is Max, the HPA's default
}

// kubernetesScaleUp is the API server's scale-up when the HPA names no policy
// (pkg/apis/autoscaling/v2/defaults.go): the larger of 4 pods or 100 % per 15 s.
var kubernetesScaleUp = []components.ScalingRules{
	{Policy: components.PolicyPods, Value: 4, PeriodSeconds: 15},
	{Policy: components.PolicyPercent, Value: 100, PeriodSeconds: 15},
}

func rulesOf(s components.ScalingRules, maxReplicas int) hpaRules {
	s = s.Resolved(maxReplicas)
	return hpaRules{time.Duration(s.StabilizationWindowSeconds) * time.Second, []components.ScalingRules{s}}
}

// behavior is p's scale-up and scale-down rules as the HPA applies them.
func (p Policy) behavior() (up, down hpaRules) {
	up, down = rulesOf(p.ScaleUp, p.Max), rulesOf(p.ScaleDown, p.Max)
	if p.KubernetesScaleUp {
		up.policies = kubernetesScaleUp
	}
	return up, down
}

// sync is one HPA sync: the metric's value to a recommendation (the current size within the
// tolerance), stabilized between the lowest recommendation within the scale-up window and the
// highest within the scale-down window, limited by the rate policies, then bounded by
// [Floor, Max].
func (h *modelHPA) sync(t time.Duration, replicas int, value float64, p Policy, tolerance float64) int {
	// The HPA compares the metric itself, not its ceiling, with the size.
	rec := replicas
	if ratio := value / float64(max(replicas, 1)); math.Abs(ratio-1) > tolerance || replicas == 0 {
		rec = int(math.Ceil(value - 1e-9))
	}
	if replicas == 0 {
		// KEDA activates a pool at 0 itself; the HPA (minimum 1) is not in that path.
		h.recs = append(h.recs, modelEvent{t, rec})
		return min(max(rec, p.Floor), p.Max)
	}
	up, down := p.behavior()
	h.forget(t, max(up.window, down.window), max(longestPeriod(up), longestPeriod(down)))
	upRec, downRec := rec, rec
	for _, r := range h.recs {
		if r.at > t-up.window {
			upRec = min(upRec, r.n)
		}
		if r.at > t-down.window {
			downRec = max(downRec, r.n)
		}
	}
	h.recs = append(h.recs, modelEvent{t, rec})
	want := min(max(replicas, upRec), downRec)
	switch {
	case want > replicas:
		limit := math.MinInt
		for _, r := range up.policies {
			start := h.periodStart(t, replicas, r.PeriodSeconds)
			proposed := start + r.Value
			if r.Policy == components.PolicyPercent {
				// Rounded up, so a small pool can always grow (the controller's own comment).
				proposed = int(math.Ceil(float64(start) * (1 + float64(r.Value)/100)))
			}
			limit = max(limit, proposed)
		}
		want = min(want, max(limit, replicas))
	case want < replicas:
		limit := math.MaxInt
		for _, r := range down.policies {
			start := h.periodStart(t, replicas, r.PeriodSeconds)
			proposed := start - r.Value
			if r.Policy == components.PolicyPercent {
				proposed = int(float64(start) * (1 - float64(r.Value)/100))
			}
			limit = min(limit, proposed)
		}
		want = max(want, min(limit, replicas))
	}
	return min(max(want, p.Floor), p.Max)
}

// periodStart is the size a period of periodSeconds ending at t began with: the current size
// less what was added in it, plus what was removed.
func (h *modelHPA) periodStart(t time.Duration, replicas, periodSeconds int) int {
	period := time.Duration(periodSeconds) * time.Second
	for _, e := range h.events {
		if e.at > t-period {
			replicas -= e.n
		}
	}
	return replicas
}

// forget drops the recommendations no window reaches and the events no period does.
func (h *modelHPA) forget(t, window, period time.Duration) {
	h.recs = dropBefore(h.recs, t-window)
	h.events = dropBefore(h.events, t-period)
}

// dropBefore drops the events at or before cut (those the controller's After(cutoff) skips).
func dropBefore(e []modelEvent, cut time.Duration) []modelEvent {
	i := 0
	for i < len(e) && e[i].at <= cut {
		i++
	}
	if i == 0 {
		return e
	}
	return append(e[:0], e[i:]...)
}

func longestPeriod(r hpaRules) time.Duration {
	var longest int
	for _, p := range r.policies {
		longest = max(longest, p.PeriodSeconds)
	}
	return time.Duration(longest) * time.Second
}

func (h *modelHPA) scaled(t time.Duration, change int) {
	h.events = append(h.events, modelEvent{t, change})
}

// ArrivalsDesired is the program's arrivals formula (components.ArrivalsDesired, what KEDA
// evaluates) on the model's reading: the claims held, the arrival windows' counts, and floor for
// the schedule window in force by the model's clock.
func ArrivalsDesired(s components.Sizing, d Demand, floor float64) float64 {
	return components.ArrivalsDesired(s, 0, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), floor)
}
