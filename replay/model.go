package replay

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
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
}

// DefaultLoop is the live benchmark's loop.
func DefaultLoop() Loop {
	return Loop{Boot: 6 * time.Second, AdoptGrace: 2 * time.Second, HPASync: HPASyncPeriod, Tolerance: 0.1}
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
	// ScaleDown is the HPA's scale-down behaviour as the program renders it; the zero value
	// drops in one sync (the behaviour every figure before it was measured with).
	ScaleDown components.ScaleDown
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
	// NodeSeconds integrates the nodes that exist, launching ones included (what EKS bills);
	// IdleNodeSeconds those beyond the ceil(held/K) nodes the claims held need. Both 0 when
	// nodes are unbounded (Nodes.SlotsPerNode 0).
	NodeSeconds, IdleNodeSeconds float64
	NodesLaunched                int
}

// SizeAt is the pool's spec.replicas from At on.
type SizeAt struct {
	At       time.Duration
	Replicas int
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
	boot := func() time.Duration {
		return loop.Boot - time.Duration(rng.Float64()*float64(time.Second))
	}
	// Cold sandboxes draw their boots from a stream of their own, so the pool's boots are the
	// same draws whatever the claims' waits are.
	coldRng := rand.New(rand.NewPCG(rngSeed^0x9e3779b97f4a7c15, rngSeed))
	coldBoot := func() time.Duration {
		return loop.Boot - time.Duration(coldRng.Float64()*float64(time.Second))
	}
	cluster := &modelCluster{cfg: loop.Nodes}
	replicas := p.Fixed
	if p.Fixed == 0 {
		replicas = max(p.Floor, p.InitialScale)
	}
	// The pool starts Ready at its size, as the benchmark waits for it.
	var ready []*modelNode // the node of each Ready unclaimed sandbox (nil: unbounded)
	for range replicas {
		ready = append(ready, cluster.initial())
	}
	res := Result{Sizes: []SizeAt{{0, replicas}}, Waits: make([]time.Duration, len(tr.Arrivals))}
	var booting []bootingSandbox // each unclaimed booting sandbox, by ready-at ascending
	next := 0
	var deletes []time.Duration
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
	// bind gives pending sandboxes the free slots, first come first bound: a warm one starts its
	// boot, a claim's cold one too (its claim's wait runs to its Ready).
	bind := func(t time.Duration) {
		for len(cluster.pending) > 0 {
			n, ok := cluster.place(t)
			if !ok {
				return
			}
			pp := cluster.pending[0]
			cluster.pending = cluster.pending[1:]
			if pp.claim < 0 {
				cluster.pendingWarm--
				booting = insertSorted(booting, bootingSandbox{t + boot(), n})
				continue
			}
			a := tr.Arrivals[pp.claim]
			claims[pp.claim] = claimSandbox{node: n}
			res.Waits[pp.claim] = max(t, a.At) + coldBoot() - a.At // bound in its arrival's step: a boot
			if res.Waits[pp.claim] > a.Lifetime {
				res.Waits[pp.claim] = a.Lifetime
				res.NeverReady++
			}
		}
	}
	var hpa modelHPA
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
				res.NeverReady++
				continue
			}
			cluster.free(claims[c].node, t)
		}
		// Launched nodes that are Ready now, and slots freed, take pending sandboxes.
		bind(t)
		// Sandboxes finish booting.
		for len(booting) > 0 && booting[0].at <= t {
			ready = append(ready, booting[0].node)
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
			deletes = append(deletes, a.At+a.Lifetime)
			switch {
			case len(ready) > 0:
				claims[c].node = ready[len(ready)-1]
				ready = ready[:len(ready)-1]
				res.WarmHits++
			case len(booting) > 0 && booting[0].at <= a.At+loop.AdoptGrace:
				claims[c].node = booting[0].node
				res.Waits[c] = max(booting[0].at-a.At, 0)
				booting = booting[1:]
				res.WarmHits++
			default:
				if n, ok := cluster.place(t); ok {
					claims[c].node = n
					res.Waits[c] = coldBoot()
				} else {
					claims[c].pending = true
					cluster.enqueue(c)
				}
			}
		}
		// The HPA syncs.
		if p.Fixed == 0 && t > 0 && t%loop.HPASync == 0 {
			d := Demand{Held: held(deletes, t), ArrivalsShort: arrivedWithin(tr, t, p.Short), ArrivalsLong: arrivedWithin(tr, t, p.Long), At: t, Clock: tr.Clock(t)}
			if n := hpa.sync(t, replicas, p.Desired(d), p, loop.Tolerance); n != replicas {
				hpa.scaled(t, n-replicas)
				replicas = n
				res.Sizes = append(res.Sizes, SizeAt{t, n})
			}
		}
		// The controller keeps ready + booting (+ pending, on no node yet) at spec.replicas: it
		// creates the missing ones and deletes the surplus, pending ones first, then booting
		// ones, then Ready ones from the emptiest node (so that nodes can empty).
		for len(ready)+len(booting)+cluster.pendingWarm < replicas {
			if n, ok := cluster.place(t); ok {
				booting = insertSorted(booting, bootingSandbox{t + boot(), n})
			} else {
				cluster.enqueue(-1)
			}
		}
		for len(ready)+len(booting)+cluster.pendingWarm > replicas {
			switch {
			case cluster.pendingWarm > 0:
				cluster.unqueueWarm()
			case len(booting) > 0:
				cluster.free(booting[len(booting)-1].node, t)
				booting = booting[:len(booting)-1]
			default:
				i := emptiest(ready)
				cluster.free(ready[i], t)
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
			res.NodeSeconds += float64(len(cluster.nodes)) * step.Seconds()
			res.IdleNodeSeconds += float64(max(len(cluster.nodes)-cluster.needed(heldNow), 0)) * step.Seconds()
		}
	}
	res.NodesLaunched = cluster.launched
	return res
}

// bootingSandbox is an unclaimed sandbox booting on node, Ready at at.
type bootingSandbox struct {
	at   time.Duration
	node *modelNode
}

// emptiest is the index of the Ready sandbox on the node holding the fewest sandboxes (the first
// such; any one when nodes are unbounded).
func emptiest(ready []*modelNode) int {
	best := 0
	for i, n := range ready {
		if n != nil && ready[best] != nil && n.used < ready[best].used {
			best = i
		}
	}
	return best
}

func held(deletes []time.Duration, t time.Duration) int {
	n := 0
	for _, d := range deletes {
		if d > t {
			n++
		}
	}
	return n
}

func arrivedWithin(tr *Trace, t, window time.Duration) int {
	if window <= 0 {
		return 0
	}
	n := 0
	for _, a := range tr.Arrivals {
		if a.At <= t && a.At > t-window {
			n++
		}
	}
	return n
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
// stabilization window) and its recent scale events (for the rate policy), as
// kube-controller-manager v1.36 keeps them (pkg/controller/podautoscaler/horizontal.go:
// stabilizeRecommendationWithBehaviors, calculateScaleDownLimitWithBehaviors).
type modelHPA struct {
	recs   []modelEvent // recommendation per sync
	events []modelEvent // replica change per scale
}

type modelEvent struct {
	at time.Duration
	n  int
}

// sync is one HPA sync: the metric's value to a recommendation (the current size within the
// tolerance), stabilized by the highest recommendation within the scale-down window, limited by
// the rate policy, then bounded by [Floor, Max].
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
	sd := p.ScaleDown.Resolved(p.Max)
	window := time.Duration(sd.StabilizationWindowSeconds) * time.Second
	stabilized := rec
	for _, r := range h.recs {
		if r.at > t-window {
			stabilized = max(stabilized, r.n)
		}
	}
	h.recs = append(h.recs, modelEvent{t, rec})
	stabilized = min(stabilized, max(rec, replicas)) // the window only holds a drop back
	want := stabilized
	if want < replicas {
		// The rate policy: from the size at the period's start, at most Value pods (or percent).
		period := time.Duration(sd.PeriodSeconds) * time.Second
		start := replicas
		for _, e := range h.events {
			if e.at > t-period {
				start -= e.n
			}
		}
		limit := start - sd.Value
		if sd.Policy == components.ScaleDownPercent {
			limit = int(float64(start) * (1 - float64(sd.Value)/100))
		}
		want = max(want, min(limit, replicas))
	}
	return min(max(want, p.Floor), p.Max)
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
