package bursts

import (
	"math"
	"math/rand/v2"
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

// ModelLoop are the loop's delays.
type ModelLoop struct {
	// Boot: a sandbox is Ready uniformly within (Boot-1s, Boot] of its create
	// (BootDelay's KWOK stage).
	Boot time.Duration
	// AdoptGrace: a claim that finds no Ready warm sandbox waits this long for
	// a booting one before it starts its own, cold.
	AdoptGrace time.Duration
	// HPASync: the HPA reads the metric and writes spec.replicas this often;
	// KEDA's adapter computes the metric on the HPA's read.
	HPASync time.Duration
	// Tolerance: the HPA leaves the size when desired/current is within it.
	Tolerance float64
}

// DefaultModelLoop is the live benchmark's loop.
func DefaultModelLoop() ModelLoop {
	return ModelLoop{Boot: 6 * time.Second, AdoptGrace: 2 * time.Second, HPASync: hpaSyncPeriod, Tolerance: 0.1}
}

// hpaSyncPeriod is EKS's HPA sync period, the one every policy of the live run and the model
// runs under.
const hpaSyncPeriod = 15 * time.Second

// Demand is what the exporter serves at one moment: the claims held and
// those created within each arrival window (deleted ones included).
type Demand struct {
	Held                        int
	ArrivalsShort, ArrivalsLong int
}

// ModelPolicy sizes a pool. Fixed > 0 is a fixed pool of that size;
// otherwise Desired maps the exporter's reading to the HPA's desired
// replicas, bounded by [Floor, Max].
type ModelPolicy struct {
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

// ModelResult is one policy's outcome on one trace.
type ModelResult struct {
	Claims, WarmHits int
	// IdleWarmPodSeconds integrates the Ready sandboxes no claim holds.
	IdleWarmPodSeconds float64
	// Sizes are the pool's spec.replicas over the trace, one entry per change.
	Sizes []SizeAt
}

// SizeAt is the pool's spec.replicas from At on.
type SizeAt struct {
	At       time.Duration
	Replicas int
}

// WarmShare is the share of claims that found a warm sandbox.
func (r ModelResult) WarmShare() float64 {
	if r.Claims == 0 {
		return 0
	}
	return float64(r.WarmHits) / float64(r.Claims)
}

// Simulate replays tr against p in steps of 100 ms. rngSeed draws the boot
// times, so two policies on one seed see the same boots in the same order.
func Simulate(tr *Trace, p ModelPolicy, loop ModelLoop, rngSeed uint64) ModelResult {
	const step = 100 * time.Millisecond
	rng := rand.New(rand.NewPCG(rngSeed, rngSeed^0x2545f4914f6cdd1d))
	boot := func() time.Duration {
		return loop.Boot - time.Duration(rng.Float64()*float64(time.Second))
	}
	replicas := p.Fixed
	if p.Fixed == 0 {
		replicas = max(p.Floor, p.InitialScale)
	}
	// The pool starts Ready at its size, as the benchmark waits for it.
	ready := replicas
	res := ModelResult{Sizes: []SizeAt{{0, replicas}}}
	var booting []time.Duration // ready-at of each unclaimed booting sandbox, ascending
	next := 0
	var deletes []time.Duration
	var hpa modelHPA
	end := max(tr.Duration, tr.End()) + step // the arrivals, then the last claim's lifetime
	for t := time.Duration(0); t < end; t += step {
		// Sandboxes finish booting.
		for len(booting) > 0 && booting[0] <= t {
			booting = booting[1:]
			ready++
		}
		// Claims arrive and adopt a warm sandbox, Ready now or within the grace.
		for next < len(tr.Arrivals) && tr.Arrivals[next].At < t+step {
			a := tr.Arrivals[next]
			next++
			res.Claims++
			deletes = append(deletes, a.At+a.Lifetime)
			switch {
			case ready > 0:
				ready--
				res.WarmHits++
			case len(booting) > 0 && booting[0] <= a.At+loop.AdoptGrace:
				booting = booting[1:]
				res.WarmHits++
			}
		}
		// The HPA syncs.
		if p.Fixed == 0 && t > 0 && t%loop.HPASync == 0 {
			d := Demand{Held: held(deletes, t), ArrivalsShort: arrivedWithin(tr, t, p.Short), ArrivalsLong: arrivedWithin(tr, t, p.Long)}
			if n := hpa.sync(t, replicas, p.Desired(d), p, loop.Tolerance); n != replicas {
				hpa.scaled(t, n-replicas)
				replicas = n
				res.Sizes = append(res.Sizes, SizeAt{t, n})
			}
		}
		// The controller keeps ready + booting at spec.replicas: it boots the
		// missing ones and deletes the surplus, booting ones first.
		for ready+len(booting) < replicas {
			booting = insertSorted(booting, t+boot())
		}
		for ready+len(booting) > replicas {
			if len(booting) > 0 {
				booting = booting[:len(booting)-1]
			} else {
				ready--
			}
		}
		res.IdleWarmPodSeconds += float64(ready) * step.Seconds()
	}
	return res
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

func insertSorted(s []time.Duration, v time.Duration) []time.Duration {
	i := len(s)
	for i > 0 && s[i-1] > v {
		i--
	}
	s = append(s, 0)
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
func (h *modelHPA) sync(t time.Duration, replicas int, value float64, p ModelPolicy, tolerance float64) int {
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
