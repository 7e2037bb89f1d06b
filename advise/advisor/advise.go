// Package advisor replays a team's own claim history against the warm-pool settings the program
// can render (fixed pools, claims plus headroom, the arrivals policy with its node keys) in the
// replay model, and recommends per pool the cheapest that reaches the warm-hit target on 90% of
// the days (every day, under 10 days), with a verdict in one sentence.
//
// Advise (or AdviseDays, on days already cut) gives the advice; WriteText writes it as the
// command prints it, WritePlots draws it, and encoding/json writes it as --json does. Main is
// the command `go run ./advise`:
//
//	go run ./advise --history claims.csv [--sandboxes-per-node 8] [--node-launch-seconds 45] ...
//
// The history's format is package history's (CSV or JSON lines of pool, claim, created,
// deleted). Or it is rebuilt from a live cluster's Prometheus, times good to one step:
//
//	go run ./advise --prometheus http://127.0.0.1:9090 --from 2026-12-01T00:00:00Z --to 2026-12-15T00:00:00Z [--pools code,browser] [--step 15s]
//
// The figures are the model's (replay), held against the live runs in docs/bursts.md.
package advisor

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
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
	// Timezone is the IANA zone the days are cut at midnight in and the schedule windows are
	// written in: a team's busy hours follow its clock across daylight saving, UTC's do not.
	// Other than UTC only with 24 h days.
	Timezone string
	// Current names the setting the pool runs now, as advise prints settings ("fixed-20",
	// "claims + headroom 3", "arrivals, rounded to 8 per node, headroom 2"): it is replayed
	// beside the others, and set against what the team got when the history says.
	Current string
	// MarginShare: raise an autoscaled recommendation's headroom while it costs at most this
	// share of the cheapest fixed pool at the target; 0 recommends the cheapest at the target.
	MarginShare float64
}

// DefaultNodePricePerHour is what one node costs an hour when the team gives no price: a
// c6a.xlarge (4 vCPU, 8 GiB: about 7 sandboxes of 500m and 1 GiB, the K the model takes) on demand,
// Linux, in us-east-1, $0.153 (https://aws.amazon.com/ec2/pricing/on-demand/), plus EKS Auto Mode's
// management fee for the instance, about 12 % of that, $0.0184 (https://aws.amazon.com/eks/pricing/).
// Both billed by the second. Read from price tables on 2026-12-06; prices vary by region and change.
const DefaultNodePricePerHour = 0.1714

// DefaultParams are the benchmark's: the local node's boot, EKS Auto Mode's nodes as the burst
// benchmark's node model takes them (K = 8, 45 s launches, consolidateAfter 30 s), 99% warm hits.
func DefaultParams() Params {
	return Params{BootSeconds: components.DefaultBootSeconds, SandboxesPerNode: 8, NodeLaunchSeconds: 45,
		ConsolidateAfter: 30 * time.Second, WarmHitTarget: components.DefaultWarmHitTarget, NodePricePerHour: DefaultNodePricePerHour, Day: 24 * time.Hour,
		Timezone: schedule.DefaultTimezone, MarginShare: DefaultMarginShare}
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
	if _, err := schedule.Zone(p.Timezone); err != nil {
		errs = append(errs, fmt.Errorf("--timezone: %w", err))
	} else if p.Timezone != schedule.DefaultTimezone && p.Day != 24*time.Hour {
		errs = append(errs, fmt.Errorf("--timezone %s cuts the days at its midnight, so it needs --day 24h (it is %s); drop one of them", p.Timezone, p.Day))
	}
	if p.MarginShare < 0 || p.MarginShare > 1 {
		errs = append(errs, fmt.Errorf("--margin is %g; a share of the fixed pool's cost in [0, 1] (0: the cheapest setting at the target, no margin)", p.MarginShare))
	}
	if p.Current != "" {
		if _, err := named(ladders(p, maxCurrentBound), p.Current); err != nil {
			errs = append(errs, err)
		}
	}
	if p.ConsolidateAfter < 0 {
		errs = append(errs, fmt.Errorf("--consolidate-after is %s; 0 or more", p.ConsolidateAfter))
	}
	return errors.Join(errs...)
}

// location is the zone of Timezone (UTC when it does not load: Check says so first).
func (p Params) location() *time.Location {
	loc, err := schedule.Zone(p.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

func (p Params) loop() replay.Loop {
	l := replay.DefaultLoop()
	l.Boot = time.Duration(p.BootSeconds) * time.Second
	if p.SandboxesPerNode > 0 {
		l.Nodes = replay.AutoModeNodes(p.SandboxesPerNode, time.Duration(p.NodeLaunchSeconds)*time.Second, p.ConsolidateAfter)
	}
	return l
}

// Candidate is one setting the program can render, as the replay runs it and as config.
type Candidate struct {
	Name   string
	Config []Setting
	// Ladder and Level place it on its ladder (Ladder.At(Level)).
	Ladder string
	Level  int
	// Margin marks a step of the margin (a raise of the cheapest at the target).
	Margin bool
	policy replay.Policy
	// schedule is the floor by the clock, when the setting has one.
	schedule *clockFloor
}

// Setting is one config key (a --path under the stack's or a pool's config) and its value.
type Setting struct{ Key, Value string }

// Commands are the `pulumi config set` lines of the settings for the one pool of the shorthand.
func (c Candidate) Commands() []string {
	out := make([]string, len(c.Config))
	for i, s := range c.Config {
		out[i] = fmt.Sprintf("pulumi config set --path '%s' %s", s.Key, shellWord(s.Value))
	}
	return out
}

// shellWord is v as one word of a POSIX shell: as it is when it is plain, single-quoted when not
// (a cron expression's spaces and stars).
func shellWord(v string) string {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:", r)) {
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
	}
	return v
}

// Entry is the settings as the pool's entry of the `pools` list, named: a nested object,
// set with `pulumi config set --path 'pools[i]' --json <entry>` or merged into a pools list.
func (c Candidate) Entry(pool string) map[string]any {
	e := map[string]any{"name": pool}
	for _, s := range c.Config {
		setPath(e, s.Key, s.Value)
	}
	return e
}

// setPath sets a --path key (dots for objects, name[i] for a list's i-th element) in root: a
// number as a number, anything else as a string.
func setPath(root map[string]any, key, value string) {
	var v any = value
	if n, err := strconv.ParseFloat(value, 64); err == nil {
		v = n
	}
	parts := strings.Split(key, ".")
	var cur any = root
	for i, part := range parts {
		last := i == len(parts)-1
		name, index := part, -1
		if open := strings.IndexByte(part, '['); open > 0 && strings.HasSuffix(part, "]") {
			if n, err := strconv.Atoi(part[open+1 : len(part)-1]); err == nil {
				name, index = part[:open], n
			}
		}
		m := cur.(map[string]any)
		if index < 0 {
			if last {
				m[name] = v
				return
			}
			if _, ok := m[name].(map[string]any); !ok {
				m[name] = map[string]any{}
			}
			cur = m[name]
			continue
		}
		list, _ := m[name].([]any)
		for len(list) <= index {
			list = append(list, map[string]any{})
		}
		m[name] = list
		if last {
			list[index] = v
			return
		}
		cur = list[index]
	}
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
	Target      float64 // the warm-hit share a day must reach
	Days        int
	Claims      int
	Peak        int
	Outcomes    []Outcome // every setting replayed, ladder by ladder, each lowest level first
	Recommended *Outcome
	// Current is the setting the pool runs now (Params.Current), replayed on the same days.
	Current *Outcome
	// Observed is what the controller counted, warm and cold, when the history says (a
	// Prometheus): the model's prediction of Current is held against it.
	Observed *history.Launches
	// Lowest is the cheapest setting at the target, before the margin (Recommended without it).
	Lowest *Outcome
	// Need is the days at the target a setting must reach; Margin the headroom the
	// recommendation was raised by beyond the lowest that reaches them (Params.MarginShare).
	Need, Margin int
	// Dropped are the schedule windows left out of the recommendation: replayed without them it
	// does as well for no more cost (their floor never binds, or binds where no claim needs it).
	Dropped string `json:",omitempty"`
	// ClockShifts are the recommendation replayed with the demand an hour or two earlier and
	// later, when it has a schedule (its hours are where the history was busy).
	ClockShifts []ClockShift `json:",omitempty"`
	Verdict     string
	Caveats     []string
	days        []*replay.Trace // what was replayed, for the plots
}

// days splits the pool's arrivals into traces of one day each, aligned to the clock, so a claim
// is in the day it was created in: 24 h days run from midnight to midnight in loc (23 or 25 h at
// a daylight-saving change), other lengths from multiples of day since the Unix epoch.
func days(h *history.History, pool string, day time.Duration, loc *time.Location) []*replay.Trace {
	dayStart := func(i int) time.Time { return h.Start.Truncate(day).Add(time.Duration(i) * day) }
	if day == 24*time.Hour {
		y, m, d := h.Start.In(loc).Date()
		dayStart = func(i int) time.Time { return time.Date(y, m, d+i, 0, 0, 0, 0, loc) }
	}
	arrivals := h.Arrivals(pool)
	// The days run to the last creation's (a claim's end runs on past its day, as it does live).
	last := h.Start
	if len(arrivals) > 0 {
		last = h.Start.Add(arrivals[len(arrivals)-1].At)
	}
	var out []*replay.Trace
	for i := 0; i == 0 || !dayStart(i).After(last); i++ {
		start, end := dayStart(i), dayStart(i+1)
		out = append(out, &replay.Trace{Name: fmt.Sprintf("%s day %d", pool, i+1), Start: start, Duration: end.Sub(start)})
	}
	// The last day only as far as the history goes: a day it does not cover would be idle
	// capacity the team never ran.
	lastDay := out[len(out)-1]
	lastDay.Duration = min(lastDay.Duration, max(h.End.Sub(lastDay.Start), time.Second))
	i := 0
	for _, a := range arrivals {
		at := h.Start.Add(a.At)
		for i < len(out)-1 && !at.Before(out[i+1].Start) {
			i++
		}
		out[i].Arrivals = append(out[i].Arrivals, replay.Arrival{At: at.Sub(out[i].Start), Lifetime: a.Lifetime})
	}
	return out
}

// fixed is a fixed pool of n.
func fixed(n int) Candidate {
	c := Candidate{Name: fmt.Sprintf("fixed-%d", n), policy: replay.Policy{Fixed: n},
		Config: []Setting{set("minReplicas", n), set("maxReplicas", n)}}
	if n < contract.DefaultLoadCap {
		// verify's load must fit the pool's bound: the program refuses a loadCap above it.
		c.Config = append(c.Config, set("loadCap", n))
	}
	return c
}

// A Ladder is one kind of setting with the knob that buys warm hits: fixed pools by size, each
// autoscaled policy by its headroom (spares on top of what the policy reads). Up the ladder a
// setting costs more and misses less.
type Ladder struct {
	Name   string
	Levels int
	At     func(level int) Candidate
	// Raise is the setting at level with k more spares all day, for the margin; nil: At(level+k).
	Raise func(level, k int) (Candidate, bool)
}

// raise is Raise, or up the ladder.
func (l Ladder) raise(level, k int) (Candidate, bool) {
	if l.Raise != nil {
		return l.Raise(level, k)
	}
	if level+k >= l.Levels {
		return Candidate{}, false
	}
	return l.At(level + k), true
}

// ladders are the settings searched, all bounded by maxReplicas = bound: fixed pools 1..bound,
// claims plus headroom 1..bound-1, and the arrivals policy plus headroom 0..bound-1 (with the
// node keys when there are nodes).
func ladders(p Params, bound int) []Ladder {
	autoscaled := func(c Candidate, desired func(replay.Demand) float64) Candidate { return autoscaled(c, desired, bound) }
	out := []Ladder{
		{Name: "fixed", Levels: bound, At: func(i int) Candidate { return fixed(i + 1) }},
		{Name: "claims + headroom", Levels: bound - 1, At: func(i int) Candidate {
			h := i + 1
			return autoscaled(Candidate{Name: fmt.Sprintf("claims + headroom %d", h),
				Config: []Setting{set("minReplicas", 1), set("maxReplicas", bound), set("headroom", h)}},
				func(d replay.Demand) float64 { return float64(d.Held + h) })
		}},
	}
	base := components.Sizing{Policy: components.SizingArrivals, BootSeconds: p.BootSeconds, HPASyncSeconds: components.DefaultHPASyncSeconds,
		WarmHitTarget: p.WarmHitTarget, ShortWindowSeconds: components.DefaultShortWindowSeconds, LongWindowSeconds: components.DefaultLongWindowSeconds, SandboxesPerNode: 1}
	arrivals := func(name string, s components.Sizing) Ladder {
		return Ladder{Name: name, Levels: bound, At: func(h int) Candidate {
			config := []Setting{set("minReplicas", 1), set("maxReplicas", bound), set("sizing.policy", components.SizingArrivals),
				set("sizing.bootSeconds", s.BootSeconds), set("sizing.warmHitTarget", s.WarmHitTarget)}
			if s.SandboxesPerNode > 1 {
				config = append(config, set("sizing.sandboxesPerNode", s.SandboxesPerNode))
			}
			if s.NodeLaunchSeconds > 0 {
				config = append(config, set("sizing.nodeLaunchSeconds", s.NodeLaunchSeconds))
			}
			full := name
			if h > 0 {
				config = append(config, set("headroom", h))
				full = fmt.Sprintf("%s, headroom %d", name, h)
			}
			return autoscaled(Candidate{Name: full, Config: config}, func(d replay.Demand) float64 {
				return components.ArrivalsDesired(s, h, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), 0)
			})
		}}
	}
	out = append(out, arrivals("arrivals", base))
	if p.SandboxesPerNode > 1 {
		r := base
		r.SandboxesPerNode = p.SandboxesPerNode
		out = append(out, arrivals(fmt.Sprintf("arrivals, rounded to %d per node", r.SandboxesPerNode), r))
		l := r
		l.NodeLaunchSeconds = p.NodeLaunchSeconds + 10 // Karpenter's longest batch window
		out = append(out, arrivals(fmt.Sprintf("arrivals, rounded, nodeLaunchSeconds %d", l.NodeLaunchSeconds), l))
	}
	for i := range out {
		out[i] = stamped(out[i])
	}
	return out
}

// autoscaled gives an autoscaled setting its policy: bounded by [1, bound], reading the
// exporter's windows, with the HPA behaviour the program renders by default, and at rest where
// the policy holds it with no demand (a day split from a continuous history starts where the
// night left the pool, not at the floor).
func autoscaled(c Candidate, desired func(replay.Demand) float64, bound int) Candidate {
	short, long := time.Duration(components.DefaultShortWindowSeconds)*time.Second, time.Duration(components.DefaultLongWindowSeconds)*time.Second
	c.policy = replay.Policy{Floor: 1, Max: bound, Short: short, Long: long, Desired: desired,
		ScaleUp: components.DefaultScaleUp(), ScaleDown: components.DefaultScaleDown()}
	c.policy.InitialScale = min(max(int(math.Ceil(desired(replay.Demand{}))), 1), bound)
	return c
}

// stamped makes l's settings say where on it they are.
func stamped(l Ladder) Ladder {
	at := l.At
	l.At = func(level int) Candidate {
		c := at(level)
		c.Ladder, c.Level = l.Name, level
		return c
	}
	return l
}

// arrivalsSizing is the arrivals policy's sizing as advise renders it, rounded to nodes when
// there are nodes.
func arrivalsSizing(p Params) components.Sizing {
	s := components.Sizing{Policy: components.SizingArrivals, BootSeconds: p.BootSeconds, HPASyncSeconds: components.DefaultHPASyncSeconds,
		WarmHitTarget: p.WarmHitTarget, ShortWindowSeconds: components.DefaultShortWindowSeconds, LongWindowSeconds: components.DefaultLongWindowSeconds, SandboxesPerNode: 1}
	if p.SandboxesPerNode > 1 {
		s.SandboxesPerNode = p.SandboxesPerNode
	}
	return s
}

// The fixed sizes replayed around the smallest at the target.
const frontierBelow, frontierAbove = 8, 4

// DefaultMarginShare: an autoscaled recommendation is raised up its ladder while it costs at most
// this share of the fixed pool that reaches the target (Params.MarginShare). 14 days cannot tell a setting at the target
// on 90% of days from one at it on 80%; what the autoscaled pool saves buys the spares that carry
// it through days the history did not show, and it still saves at least 5%.
const DefaultMarginShare = 0.95

// Advise replays the settings on every day of each pool's history and recommends the cheapest
// that reaches the warm-hit target on 90% of the days (all of them when there are fewer than 10).
func Advise(h *history.History, p Params) ([]PoolAdvice, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	var out []PoolAdvice
	for _, pool := range h.PoolNames() {
		all := days(h, pool, p.Day, p.location())
		// A day without a claim passes the target whatever the setting: judged, it would let a
		// small pool through. It is a gap in the record or a day without demand; both are left
		// out, and the caveat says which days and what that costs a fixed pool.
		var judged []*replay.Trace
		var empty []string
		for i, d := range all {
			if len(d.Arrivals) == 0 {
				empty = append(empty, strconv.Itoa(i+1))
				continue
			}
			judged = append(judged, d)
		}
		a, err := AdviseDays(pool, judged, p)
		if err != nil {
			return nil, err
		}
		if o, ok := h.Observed[pool]; ok && o.Warm+o.Cold > 0 {
			a.Observed = &o
		}
		if len(empty) > 0 {
			a.Caveats = append(a.Caveats, fmt.Sprintf("%d of %d days have no claim (day %s from the first): a gap in the record or days without demand; they are left out, so on such days a fixed pool costs a whole day of nodes more than the table shows, an autoscaled one its floor", len(empty), len(all), strings.Join(empty, ", ")))
		}
		if long := longClaims(h, pool, p.Day); long != "" {
			a.Caveats = append(a.Caveats, long)
		}
		if open := heldAtEnd(h, pool); open != "" {
			a.Caveats = append(a.Caveats, open)
		}
		if h.Span() < p.Day {
			a.Caveats = append(a.Caveats, fmt.Sprintf("the history spans %s, less than a day: the advice holds for demand like these %s, not for a whole day's shape", h.Span().Round(time.Second), h.Span().Round(time.Second)))
		}
		out = append(out, a)
	}
	return out, nil
}

// longClaims says how many of the pool's claims were held longer than a day, if any: a clock
// that jumped between create and delete, or a session the pool's sizing should know of.
func longClaims(h *history.History, pool string, day time.Duration) string {
	n, longest, line := 0, time.Duration(0), 0
	for _, c := range h.Pools[pool] {
		if c.Held() {
			continue
		}
		if d := c.Deleted.Sub(c.Created); d > day {
			n++
			if d > longest {
				longest, line = d, c.Line
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d claim(s) held longer than a day (the longest %s, line %d): if a clock jumped between its create and delete, fix those rows; the replay holds them that long", n, longest.Round(time.Second), line)
}

// heldAtEnd names the pool's claims still held when the history ends: the replay holds them to
// its end, so each one's lifetime is a lower bound, and a claim whose deletion the export missed
// is held for the rest of the history (one such raised a fixed pool's cost by three quarters).
func heldAtEnd(h *history.History, pool string) string {
	const named = 5
	var lines []string
	n := 0
	for _, c := range h.Pools[pool] {
		if !c.Held() {
			continue
		}
		n++
		if len(lines) < named && c.Line > 0 {
			lines = append(lines, fmt.Sprint(c.Line))
		}
	}
	if n == 0 {
		return ""
	}
	where := ""
	if len(lines) > 0 {
		where = " (line " + strings.Join(lines, ", ")
		if n > len(lines) {
			where += ", ..."
		}
		where += ")"
	}
	return fmt.Sprintf("%d claim(s) still held when the history ends%s: the replay holds each to the end (%s), so its lifetime is a lower bound; if one was deleted and the export missed it, give its deletion time",
		n, where, h.End.Format(time.RFC3339))
}

// ninetyPercentOf is the days of n a setting must reach the target on: 90%, rounded up.
func ninetyPercentOf(n int) int { return (9*n + 9) / 10 }

// searchBound is the maxReplicas the settings are searched under for days peaking at peak
// claims held: the peak rounded up to 5 (at least 10), and 5 more.
func searchBound(peak int) int { return max((peak+4)/5*5, 10) + 5 }

// AdviseDays is one pool's advice on its days (traces of one Day each). Every fixed size is
// replayed (the frontier); each autoscaled ladder is searched for its lowest level at the
// target. The cheapest of those is recommended; an autoscaled one is then raised by the margin.
func AdviseDays(pool string, ds []*replay.Trace, p Params) (PoolAdvice, error) {
	loop := p.loop()
	a := PoolAdvice{Pool: pool, Target: p.WarmHitTarget, Days: len(ds), days: ds}
	for _, d := range ds {
		a.Claims += len(d.Arrivals)
		a.Peak = max(a.Peak, d.Peak())
	}
	need := len(ds)
	if len(ds) >= 10 {
		need = ninetyPercentOf(len(ds))
	}
	a.Need = need
	bound := searchBound(a.Peak)
	var best, bestFixed *Outcome
	var bestLadder Ladder
	var bestLevel int
	found := map[string]int{}
	consider := func(l Ladder) {
		level, outcomes := search(l, ds, p, loop, need, l.Name == "fixed")
		a.Outcomes = append(a.Outcomes, outcomes...)
		found[l.Name] = level
		if level < 0 {
			return
		}
		o := outcomeAt(outcomes, l.At(level).Name)
		if best == nil || o.Cost < best.Cost {
			best, bestLadder, bestLevel = o, l, level
		}
		if l.Name == "fixed" {
			bestFixed = o
		}
	}
	for _, l := range ladders(p, bound) {
		consider(l)
	}
	// A schedule's floor by day lets the night run on less headroom: the arrivals policy with
	// a floor through the history's busy hours, at a few headrooms below the one it needs
	// without a floor, each bisected for its floor.
	if ws, ok := busyWindows(ds, p.dayClock()); ok {
		if h := found[arrivalsLadderName(p)]; h > 0 {
			for _, headroom := range uniqueInts(0, h/3, 2*h/3) {
				consider(scheduleLadder(p, bound, arrivalsSizing(p), ws, headroom))
			}
		}
	}
	if p.Current != "" {
		c, err := named(ladders(p, max(bound, currentBound(p.Current))), p.Current)
		if err != nil {
			return a, err
		}
		o := replayDays(c, ds, p, loop)
		a.Current = &o
	}
	if best != nil {
		lowest := *best
		a.Lowest = &lowest
	}
	if best != nil && best.policy.Fixed == 0 && bestFixed != nil {
		if raised, k := raiseByMargin(bestLadder, bestLevel, ds, p, loop, need, p.MarginShare*bestFixed.Cost); k > 0 {
			a.Outcomes = append(a.Outcomes, raised...)
			best, a.Margin = &a.Outcomes[len(a.Outcomes)-1], k
		}
	}
	if best != nil && best.schedule != nil {
		if simpler, dropped := withoutDeadWindows(*best, ds, p, loop); len(dropped) > 0 {
			a.Dropped = dropped.describe(best.schedule.clock)
			if o := outcomeAt(a.Outcomes, simpler.Name); o != nil {
				best = o
			} else {
				a.Outcomes = append(a.Outcomes, simpler)
				best = &a.Outcomes[len(a.Outcomes)-1]
			}
		}
		if best.schedule != nil {
			a.ClockShifts = clockShifts(*best, ds, p, loop)
		}
	}
	if best != nil {
		// What advise recommends, the program must take: its own validation, under mocks.
		if err := best.accepted(); err != nil {
			return a, fmt.Errorf("pool %s: %w (a defect of advise: please report it)", pool, err)
		}
		rec := *best
		a.Recommended = &rec
	}
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
	return a, nil
}

// raiseByMargin raises the setting at level of l, k spares at a time, while it costs at most
// costCap, and returns the raises at the target on need days, the last of them the most raised
// (k: its spares; 0, none). A raise that misses the target on a day the one below it met (the
// node packing, the boots drawn) is passed over, not the end of the margin.
func raiseByMargin(l Ladder, level int, ds []*replay.Trace, p Params, loop replay.Loop, need int, costCap float64) ([]Outcome, int) {
	var raised []Outcome
	last := 0
	for k := 1; ; k++ {
		c, ok := l.raise(level, k)
		if !ok {
			break
		}
		c.Margin = true
		o := replayDays(c, ds, p, loop)
		if o.Cost > costCap {
			break
		}
		if o.DaysAtTarget < need {
			continue
		}
		raised, last = append(raised, o), k
	}
	return raised, last
}

// maxCurrentBound bounds the settings --current can name: the program's maxReplicas is far below.
const maxCurrentBound = 1000

// currentBound is a fixed pool's size when name is one, so the ladder reaches it.
func currentBound(name string) int {
	var n int
	if _, err := fmt.Sscanf(name, "fixed-%d", &n); err == nil {
		return n
	}
	return 0
}

// named is the setting of that name on the ladders.
func named(ls []Ladder, name string) (Candidate, error) {
	for _, l := range ls {
		for level := 0; level < l.Levels; level++ {
			if c := l.At(level); c.Name == name {
				return c, nil
			}
		}
	}
	examples := make([]string, len(ls))
	for i, l := range ls {
		examples[i] = fmt.Sprintf("%q", l.At(min(2, l.Levels-1)).Name)
	}
	return Candidate{}, fmt.Errorf("--current %q is no setting advise knows; name it as advise prints it, e.g. %s", name, strings.Join(examples, ", "))
}

// search finds the lowest level of l at the target on need days (-1: none up to its top), by
// bisection (more of the knob misses less); with around set, it also replays the levels from
// frontierBelow under it to frontierAbove over it (the fixed frontier) and finds the cheapest
// at the target among them.
// It returns the outcomes it replayed, lowest level first.
func search(l Ladder, ds []*replay.Trace, p Params, loop replay.Loop, need int, around bool) (int, []Outcome) {
	got := map[int]Outcome{}
	at := func(level int) Outcome {
		if o, ok := got[level]; ok {
			return o
		}
		o := replayDays(l.At(level), ds, p, loop)
		got[level] = o
		return o
	}
	found := -1
	if at(l.Levels-1).DaysAtTarget >= need {
		lo, hi := -1, l.Levels-1 // lo misses the target (or is below the ladder), hi reaches it
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if at(mid).DaysAtTarget >= need {
				hi = mid
			} else {
				lo = mid
			}
		}
		found = hi
	}
	if around {
		// the levels near it too: the frontier the table and plot show, and the cheapest at the
		// target (node packing makes cost not quite monotone in the level)
		top := l.Levels - 1
		if found >= 0 {
			top = min(found+frontierAbove, l.Levels-1)
		}
		for level := max(top-frontierAbove-frontierBelow, 0); level <= top; level++ {
			if o := at(level); o.DaysAtTarget >= need && found >= 0 && o.Cost < got[found].Cost {
				found = level
			}
		}
	}
	var out []Outcome
	for _, level := range slices.Sorted(maps.Keys(got)) {
		out = append(out, got[level])
	}
	return found, out
}

func outcomeAt(os []Outcome, name string) *Outcome {
	for i := range os {
		if os[i].Name == name {
			return &os[i]
		}
	}
	return nil
}

// atTarget says whether a day reached the warm-hit target (a day without a claim does).
func (p Params) atTarget(r replay.Result) bool {
	return r.Claims == 0 || float64(r.WarmHits) >= p.WarmHitTarget*float64(r.Claims)
}

// cost is a day's cost: node-seconds, or idle warm pod-seconds when there are no nodes.
func (p Params) cost(r replay.Result) float64 {
	if p.SandboxesPerNode > 0 {
		return r.NodeSeconds
	}
	return r.IdleWarmPodSeconds
}

// simulateDays replays one candidate on each day, side by side on the machine's cores; each day
// is seeded by its index, so every candidate sees the same boots on a day.
func simulateDays(c Candidate, ds []*replay.Trace, loop replay.Loop) []replay.Result {
	results := make([]replay.Result, len(ds))
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = replay.Simulate(ds[i], c.policy, loop, uint64(i+1))
			}
		}()
	}
	for i := range ds {
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

// replayDays is one candidate over the days (simulateDays), summed up.
func replayDays(c Candidate, ds []*replay.Trace, p Params, loop replay.Loop) Outcome {
	results := simulateDays(c, ds, loop)
	o := Outcome{Candidate: c, Days: len(ds)}
	var waits []time.Duration
	claims, hits := 0, 0
	for _, r := range results {
		claims, hits = claims+r.Claims, hits+r.WarmHits
		if p.atTarget(r) {
			o.DaysAtTarget++
		}
		o.Cost += p.cost(r) / float64(len(ds))
		waits = append(waits, r.Waits...)
	}
	if claims > 0 {
		o.WarmShare = float64(hits) / float64(claims)
	}
	o.WaitP95, o.WaitP99 = replay.Percentile(waits, 95), replay.Percentile(waits, 99)
	return o
}
