package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/history"
	"github.com/warmpool/warm-pool-autoscaling-keda/replay"
)

// Params are what a team knows about its platform; the replay runs on them.
type Params struct {
	BootSeconds int // a sandbox's create -> Ready
	// SandboxesPerNode K: 0 is nodes always there (the cost is then idle warm pod-seconds).
	SandboxesPerNode  int
	NodeLaunchSeconds int // a node's launch -> Ready
	ConsolidateAfter  time.Duration
	WarmHitTarget     float64 // in (0.5, 1)
	NodePricePerHour  float64 // > 0 prints money beside node-seconds
	Day               time.Duration
}

// DefaultParams are the benchmark's: the local node's boot, EKS Auto Mode's nodes as issue 29's
// model takes them (K = 8, 45 s launches, consolidateAfter 30 s), 99% warm hits.
func DefaultParams() Params {
	return Params{BootSeconds: components.DefaultBootSeconds, SandboxesPerNode: 8, NodeLaunchSeconds: 45,
		ConsolidateAfter: 30 * time.Second, WarmHitTarget: components.DefaultWarmHitTarget, Day: 24 * time.Hour}
}

// Check says what is wrong with p.
func (p Params) Check() error {
	var errs []error
	if p.BootSeconds < 1 || p.BootSeconds > 600 {
		errs = append(errs, fmt.Errorf("--boot-seconds is %d; set your sandbox's create to Ready in seconds, 1..600", p.BootSeconds))
	}
	if p.SandboxesPerNode < 0 || p.SandboxesPerNode > 110 {
		errs = append(errs, fmt.Errorf("--sandboxes-per-node is %d; set how many sandboxes one node holds (0: nodes are always there), 0..110", p.SandboxesPerNode))
	}
	if p.NodeLaunchSeconds < 0 || p.NodeLaunchSeconds > 900 {
		errs = append(errs, fmt.Errorf("--node-launch-seconds is %d; 0..900 (about 30-45 on EKS Auto Mode)", p.NodeLaunchSeconds))
	}
	if !(p.WarmHitTarget > 0.5 && p.WarmHitTarget < 1) {
		errs = append(errs, fmt.Errorf("--warm-hit-target is %g; a share in (0.5, 1), e.g. 0.99", p.WarmHitTarget))
	}
	if p.NodePricePerHour < 0 {
		errs = append(errs, fmt.Errorf("--node-price-per-hour is %g; a price, 0 for none", p.NodePricePerHour))
	}
	if p.Day < time.Minute {
		errs = append(errs, fmt.Errorf("--day is %s; at least 1m", p.Day))
	}
	if p.ConsolidateAfter < 0 {
		errs = append(errs, fmt.Errorf("--consolidate-after is %s; 0 or more", p.ConsolidateAfter))
	}
	return errors.Join(errs...)
}

func (p Params) loop() replay.Loop {
	l := replay.DefaultLoop()
	l.Boot = time.Duration(p.BootSeconds) * time.Second
	if p.SandboxesPerNode > 0 {
		l.Nodes = replay.Nodes{SlotsPerNode: p.SandboxesPerNode, LaunchDelay: time.Duration(p.NodeLaunchSeconds) * time.Second,
			BatchIdle: time.Second, BatchMax: 10 * time.Second, ConsolidateAfter: p.ConsolidateAfter, DisruptionDelay: replay.LiveDisruptionDelay}
	}
	return l
}

// Candidate is one setting the program can render, as the replay runs it and as config.
type Candidate struct {
	Name   string
	Config []Setting
	policy replay.Policy
}

// Setting is one config key (a --path under the stack's or a pool's config) and its value.
type Setting struct{ Key, Value string }

// Commands are the `pulumi config set` lines of the settings for the one pool of the shorthand.
func (c Candidate) Commands() []string {
	out := make([]string, len(c.Config))
	for i, s := range c.Config {
		out[i] = fmt.Sprintf("pulumi config set --path '%s' %s", s.Key, s.Value)
	}
	return out
}

// Entry is the settings as the pool's entry of the `pools` list, named: a nested object,
// set with `pulumi config set --path 'pools[i]' --json <entry>` or merged into a pools list.
func (c Candidate) Entry(pool string) map[string]any {
	e := map[string]any{"name": pool}
	for _, s := range c.Config {
		m, key := e, s.Key
		for {
			dot := strings.IndexByte(key, '.')
			if dot < 0 {
				break
			}
			sub, ok := m[key[:dot]].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[key[:dot]] = sub
			}
			m, key = sub, key[dot+1:]
		}
		if n, err := strconv.ParseFloat(s.Value, 64); err == nil {
			m[key] = n
		} else {
			m[key] = s.Value
		}
	}
	return e
}

func set(key string, value any) Setting { return Setting{key, fmt.Sprint(value)} }

// Outcome is a candidate over the history's days.
type Outcome struct {
	Candidate
	Days, DaysAtTarget int
	WarmShare          float64 // over every claim
	WaitP95, WaitP99   time.Duration
	Cost               float64 // node-seconds (idle warm pod-seconds without nodes), per day
}

// PoolAdvice is one pool's answer.
type PoolAdvice struct {
	Pool        string
	Days        int
	Claims      int
	Peak        int
	Outcomes    []Outcome // fixed sizes, then the autoscaled candidates
	Recommended *Outcome
	Verdict     string
	Caveats     []string
}

// days splits the pool's arrivals into traces of one Day each, aligned to the clock (a 24 h day
// starts at midnight UTC), so a claim is in the day it was created in.
func days(h *history.History, pool string, day time.Duration) []*replay.Trace {
	origin := h.Start.Truncate(day)
	lead := h.Start.Sub(origin)
	arrivals := h.Arrivals(pool)
	// The days run to the last creation's (a claim's end runs on past its day, as it does live).
	last := time.Duration(0)
	if len(arrivals) > 0 {
		last = arrivals[len(arrivals)-1].At + lead
	}
	n := int(last/day) + 1
	out := make([]*replay.Trace, n)
	for i := range out {
		// The last day only as far as the history goes: a day it does not cover would be
		// idle capacity the team never ran.
		dur := day
		if i == n-1 {
			dur = min(day, max(h.End.Sub(origin)-time.Duration(i)*day, time.Second))
		}
		out[i] = &replay.Trace{Name: fmt.Sprintf("%s day %d", pool, i+1), Duration: dur}
	}
	for _, a := range arrivals {
		at := a.At + lead
		i := min(int(at/day), n-1)
		out[i].Arrivals = append(out[i].Arrivals, replay.Arrival{At: at - time.Duration(i)*day, Lifetime: a.Lifetime})
	}
	return out
}

// candidates are the settings searched: fixed pools 1..bound, claims plus headroom, and the
// arrivals policy (with the node keys when there are nodes), each bounded by maxReplicas = bound.
func candidates(p Params, bound int) []Candidate {
	var cs []Candidate
	for n := 1; n <= bound; n++ {
		c := Candidate{Name: fmt.Sprintf("fixed-%d", n), policy: replay.Policy{Fixed: n},
			Config: []Setting{set("minReplicas", n), set("maxReplicas", n)}}
		if n < contract.DefaultLoadCap {
			// verify's load must fit the pool's bound: the program refuses a loadCap above it.
			c.Config = append(c.Config, set("loadCap", n))
		}
		cs = append(cs, c)
	}
	for _, h := range []int{1, 2, 3, 4, 6, 8} {
		h := h
		cs = append(cs, Candidate{Name: fmt.Sprintf("claims + headroom %d", h),
			policy: replay.Policy{Desired: func(d replay.Demand) float64 { return float64(d.Held + h) }},
			Config: []Setting{set("minReplicas", 1), set("maxReplicas", bound), set("headroom", h)}})
	}
	base := components.Sizing{Policy: components.SizingArrivals, BootSeconds: p.BootSeconds, HPASyncSeconds: components.DefaultHPASyncSeconds,
		WarmHitTarget: p.WarmHitTarget, ShortWindowSeconds: components.DefaultShortWindowSeconds, LongWindowSeconds: components.DefaultLongWindowSeconds, SandboxesPerNode: 1}
	arrivals := func(name string, s components.Sizing, floor int) Candidate {
		config := []Setting{set("minReplicas", floor), set("maxReplicas", bound), set("sizing.policy", components.SizingArrivals),
			set("sizing.bootSeconds", s.BootSeconds), set("sizing.warmHitTarget", s.WarmHitTarget)}
		if s.SandboxesPerNode > 1 {
			config = append(config, set("sizing.sandboxesPerNode", s.SandboxesPerNode))
		}
		if s.NodeLaunchSeconds > 0 {
			config = append(config, set("sizing.nodeLaunchSeconds", s.NodeLaunchSeconds))
		}
		return Candidate{Name: name, Config: config, policy: replay.Policy{Floor: floor, Desired: func(d replay.Demand) float64 {
			return replay.ArrivalsDesired(s, d, 0)
		}}}
	}
	cs = append(cs, arrivals("arrivals", base, 1))
	if p.SandboxesPerNode > 1 {
		r := base
		r.SandboxesPerNode = p.SandboxesPerNode
		cs = append(cs, arrivals(fmt.Sprintf("arrivals, rounded to %d per node", r.SandboxesPerNode), r, 1))
		l := r
		l.NodeLaunchSeconds = p.NodeLaunchSeconds + 10 // Karpenter's longest batch window
		cs = append(cs, arrivals(fmt.Sprintf("arrivals, rounded, nodeLaunchSeconds %d", l.NodeLaunchSeconds), l, 1))
	}
	short, long := time.Duration(components.DefaultShortWindowSeconds)*time.Second, time.Duration(components.DefaultLongWindowSeconds)*time.Second
	for i := range cs {
		if cs[i].policy.Fixed == 0 {
			cs[i].policy.Floor = max(cs[i].policy.Floor, 1)
			cs[i].policy.Max, cs[i].policy.Short, cs[i].policy.Long = bound, short, long
		}
	}
	return cs
}

// Advise replays every candidate on every day of each pool's history and recommends the cheapest
// that reaches the warm-hit target on 90% of the days (all of them when there are fewer than 10).
func Advise(h *history.History, p Params) ([]PoolAdvice, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	loop := p.loop()
	var out []PoolAdvice
	for _, pool := range h.PoolNames() {
		ds := days(h, pool, p.Day)
		a := PoolAdvice{Pool: pool, Days: len(ds)}
		for _, d := range ds {
			a.Claims += len(d.Arrivals)
			a.Peak = max(a.Peak, d.Peak())
		}
		if h.Span() < p.Day {
			a.Caveats = append(a.Caveats, fmt.Sprintf("the history spans %s, less than a day: the advice holds for demand like these %s, not for a whole day's shape", h.Span().Round(time.Second), h.Span().Round(time.Second)))
		}
		need := len(ds)
		if len(ds) >= 10 {
			need = int(math.Ceil(0.9 * float64(len(ds))))
		}
		bound := max((a.Peak+4)/5*5, 10) + 5
		for _, c := range candidates(p, bound) {
			o := Outcome{Candidate: c, Days: len(ds)}
			var waits []time.Duration
			claims, hits := 0, 0
			for i, d := range ds {
				r := replay.Simulate(d, c.policy, loop, uint64(i+1))
				claims, hits = claims+r.Claims, hits+r.WarmHits
				if r.Claims == 0 || float64(r.WarmHits) >= p.WarmHitTarget*float64(r.Claims) {
					o.DaysAtTarget++
				}
				cost := r.IdleWarmPodSeconds
				if p.SandboxesPerNode > 0 {
					cost = r.NodeSeconds
				}
				o.Cost += cost / float64(len(ds))
				waits = append(waits, r.Waits...)
			}
			if claims > 0 {
				o.WarmShare = float64(hits) / float64(claims)
			}
			o.WaitP95, o.WaitP99 = replay.Percentile(waits, 95), replay.Percentile(waits, 99)
			a.Outcomes = append(a.Outcomes, o)
		}
		var best, bestFixed *Outcome
		for i := range a.Outcomes {
			o := &a.Outcomes[i]
			if o.DaysAtTarget < need {
				continue
			}
			if best == nil || o.Cost < best.Cost {
				best = o
			}
			if o.policy.Fixed > 0 && (bestFixed == nil || o.Cost < bestFixed.Cost) {
				bestFixed = o
			}
		}
		if best != nil {
			// What advise recommends, the program must take: its own validation, under mocks.
			if err := best.accepted(); err != nil {
				return nil, fmt.Errorf("pool %s: %w (a defect of advise: please report it)", pool, err)
			}
		}
		a.Recommended = best
		switch {
		case best == nil:
			a.Verdict = fmt.Sprintf("no setting searched reaches %g%% warm hits on %d of %d days, fixed pools up to %d included: raise maxReplicas beyond the peak or lower the target", 100*p.WarmHitTarget, need, len(ds), bound)
		case best.policy.Fixed > 0:
			a.Verdict = fmt.Sprintf("a fixed pool of %d: no autoscaled setting reaches %g%% warm hits on %d of %d days for less", best.policy.Fixed, 100*p.WarmHitTarget, need, len(ds))
		default:
			saving := "no fixed pool up to the bound reaches the target"
			if bestFixed != nil {
				saving = fmt.Sprintf("%.0f%% of the cost of the cheapest fixed pool that does (%s)", 100*best.Cost/bestFixed.Cost, bestFixed.Name)
			}
			a.Verdict = fmt.Sprintf("autoscaled, %s: %g%% warm hits on %d of %d days for %s", best.Name, 100*p.WarmHitTarget, best.DaysAtTarget, len(ds), saving)
		}
		out = append(out, a)
	}
	return out, nil
}
