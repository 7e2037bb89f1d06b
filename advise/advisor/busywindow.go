package advisor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// The day is read in slotsPerDay slots (hours of a 24 h day); a slot is busy when its mean
// arrivals over the days reach busyShare of the busiest slot's.
const (
	slotsPerDay = 24
	busyShare   = 0.25
	// minQuietSlots: a window over more of the day than all but these is a floor all day
	// (minReplicas), not a schedule.
	minQuietSlots = 4
)

// dayClock reads a time of a history's day as a slot: on 24 h days the hour of the clock in the
// zone the days are cut in (a day of 23 or 25 h at a daylight-saving change keeps its hours where
// the clock has them, as KEDA's cron trigger in that zone does); otherwise, and for a trace with
// no clock, the share of the day at is into it.
type dayClock struct {
	day time.Duration
	loc *time.Location
}

func (p Params) dayClock() dayClock { return dayClock{day: p.Day, loc: p.location()} }

// slot is the slot of a time at from its day's start, clock its clock time (zero: none).
func (c dayClock) slot(clock time.Time, at time.Duration) int {
	if !clock.IsZero() && c.day == 24*time.Hour {
		return clock.In(c.loc).Hour() * slotsPerDay / 24
	}
	return int(at * slotsPerDay / c.day)
}

// zone is the name the schedule windows are written in.
func (c dayClock) zone() string { return c.loc.String() }

// maxBusyWindows: a day busy in more spans than this keeps its closest ones together.
const maxBusyWindows = 3

// BusyWindow is a span of the day the history is busy in, as slots [Start, End): where a
// schedule's floor goes.
type BusyWindow struct{ Start, End int }

// BusyWindows are the day's busy spans, in order: a schedule window each.
type BusyWindows []BusyWindow

// busyWindows finds them: runs of busy slots, a lull shorter than minQuietSlots kept inside its
// window (a floor through it costs less than the refill after it), at most maxBusyWindows (the
// closest merged). ok is false when no slot is busy, or the windows leave fewer than
// minQuietSlots out.
func busyWindows(ds []*replay.Trace, clock dayClock) (BusyWindows, bool) {
	var arrivals [slotsPerDay]float64
	for _, d := range ds {
		for _, a := range d.Arrivals {
			arrivals[min(clock.slot(d.Clock(a.At), a.At), slotsPerDay-1)]++
		}
	}
	peak := 0.0
	for _, n := range arrivals {
		peak = max(peak, n)
	}
	var ws BusyWindows
	for i, n := range arrivals {
		if peak == 0 || n < busyShare*peak {
			continue
		}
		if last := len(ws) - 1; last >= 0 && i-ws[last].End < minQuietSlots {
			ws[last].End = i + 1
		} else {
			ws = append(ws, BusyWindow{Start: i, End: i + 1})
		}
	}
	for len(ws) > maxBusyWindows {
		closest := 0
		for i := range len(ws) - 1 {
			if ws[i+1].Start-ws[i].End < ws[closest+1].Start-ws[closest].End {
				closest = i
			}
		}
		ws[closest].End = ws[closest+1].End
		ws = slices.Delete(ws, closest+1, closest+2)
	}
	busy := 0
	for _, w := range ws {
		busy += w.End - w.Start
	}
	if len(ws) == 0 || busy > slotsPerDay-minQuietSlots {
		return nil, false
	}
	return ws, true
}

// windows are the schedule windows that keep warm sandboxes through ws, as the program renders
// them: the slots as hours of the clock in the zone the days were cut in.
func (ws BusyWindows) windows(warm int, clock dayClock) []schedule.Window {
	hours := func(slot int) string { return fmt.Sprintf("0 %d * * *", slot*24/slotsPerDay%24) }
	out := make([]schedule.Window, len(ws))
	for i, w := range ws {
		out[i] = schedule.Window{Start: hours(w.Start), End: hours(w.End), Timezone: clock.zone(), Warm: warm}
	}
	return out
}

// inForce says whether the sync d lies in one of the windows.
func (ws BusyWindows) inForce(d replay.Demand, clock dayClock) bool {
	s := clock.slot(d.Clock, d.At)
	for _, w := range ws {
		if s >= w.Start && s < w.End {
			return true
		}
	}
	return false
}

// describe prints the windows as hours of the clock in the zone.
func (ws BusyWindows) describe(clock dayClock) string {
	var spans []string
	for _, w := range ws {
		spans = append(spans, fmt.Sprintf("%02d:00-%02d:00", w.Start*24/slotsPerDay, w.End*24/slotsPerDay))
	}
	return strings.Join(spans, " and ") + " " + clock.zone()
}

// arrivalsLadderName is the ladder the schedule is laid on: arrivals, rounded to nodes when
// there are nodes.
func arrivalsLadderName(p Params) string {
	if p.SandboxesPerNode > 1 {
		return fmt.Sprintf("arrivals, rounded to %d per node", p.SandboxesPerNode)
	}
	return "arrivals"
}

// scheduleLadder is the arrivals policy (rounded to nodes when there are nodes) at a headroom,
// with a floor of warm sandboxes through the busy windows, by that floor.
func scheduleLadder(p Params, bound int, s components.Sizing, ws BusyWindows, headroom int) Ladder {
	clock := p.dayClock() // once: the zone is loaded here, not at every sync of the replay
	name := fmt.Sprintf("%s, headroom %d, schedule %s", arrivalsLadderName(p), headroom, ws.describe(clock))
	return stamped(Ladder{Name: name, Levels: bound - 1, Raise: func(level, k int) (Candidate, bool) {
		// the margin is spares all day, not a higher floor by day
		if headroom+k >= bound {
			return Candidate{}, false
		}
		return scheduleLadder(p, bound, s, ws, headroom+k).At(level), true
	}, At: func(i int) Candidate {
		warm := i + 1
		sw := s
		sw.Schedule = ws.windows(warm, clock)
		config := []Setting{set("minReplicas", 1), set("maxReplicas", bound), set("sizing.policy", components.SizingArrivals),
			set("sizing.bootSeconds", s.BootSeconds), set("sizing.warmHitTarget", s.WarmHitTarget)}
		for j, win := range sw.Schedule {
			at := fmt.Sprintf("sizing.schedule[%d].", j)
			config = append(config, set(at+"start", win.Start), set(at+"end", win.End), set(at+"timezone", win.Timezone), set(at+"warm", warm))
		}
		if s.SandboxesPerNode > 1 {
			config = append(config, set("sizing.sandboxesPerNode", s.SandboxesPerNode))
		}
		if headroom > 0 {
			config = append(config, set("headroom", headroom))
		}
		c := autoscaled(Candidate{Name: fmt.Sprintf("%s, warm %d", name, warm), Config: config}, func(d replay.Demand) float64 {
			floor := 0.0
			if ws.inForce(d, clock) {
				floor = float64(warm)
			}
			return components.ArrivalsDesired(sw, headroom, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), floor)
		}, bound)
		c.schedule = &clockFloor{windows: ws, clock: clock, with: func(fewer BusyWindows) Candidate {
			if len(fewer) == 0 {
				return plainArrivals(p, bound, headroom)
			}
			return scheduleLadder(p, bound, s, fewer, headroom).At(i)
		}}
		return c
	}})
}

// clockFloor is a setting's floor by the clock: its windows, and the same setting with fewer.
type clockFloor struct {
	windows BusyWindows
	clock   dayClock
	with    func(BusyWindows) Candidate // none: the arrivals policy at the same headroom
}

// plainArrivals is the arrivals policy (rounded to nodes when there are nodes) at headroom,
// without a schedule.
func plainArrivals(p Params, bound, headroom int) Candidate {
	for _, l := range ladders(p, bound) {
		if l.Name == arrivalsLadderName(p) {
			return l.At(headroom)
		}
	}
	panic("advise: no arrivals ladder") // ladders always has one
}

// withoutDeadWindows drops each window of o's schedule that buys nothing the replay can see:
// replayed without it, the setting reaches the target on as many days, with as many warm hits
// and no longer waits, for no more cost. A floor below what the headroom keeps warm anyway never
// binds, and the config lines that set it would do nothing. It returns o unchanged and no
// windows when every window binds.
func withoutDeadWindows(o Outcome, ds []*replay.Trace, p Params, loop replay.Loop) (Outcome, BusyWindows) {
	var dropped BusyWindows
	for i := 0; o.schedule != nil && i < len(o.schedule.windows); {
		fewer := slices.Delete(slices.Clone(o.schedule.windows), i, i+1)
		c := o.schedule.with(fewer)
		c.Margin = o.Margin
		without := replayDays(c, ds, p, loop)
		if without.DaysAtTarget < o.DaysAtTarget || without.WarmShare < o.WarmShare || without.WaitP99 > o.WaitP99 || without.Cost > o.Cost {
			i++
			continue
		}
		dropped = append(dropped, o.schedule.windows[i])
		o = without
	}
	return o, dropped
}

// ClockShift is a setting replayed with the history's demand moved by Shift within each day.
type ClockShift struct {
	Shift        time.Duration
	DaysAtTarget int
	WarmShare    float64
	Cost         float64
}

// clockShifts replays o with the demand an hour and two (of a 24 h day: a 24th and a 12th of
// the day) earlier and later: what the schedule's hours do when the busy hours move.
func clockShifts(o Outcome, ds []*replay.Trace, p Params, loop replay.Loop) []ClockShift {
	hour := p.Day / 24
	var out []ClockShift
	for _, by := range []time.Duration{-2 * hour, -hour, hour, 2 * hour} {
		r := replayDays(o.Candidate, shiftedDays(ds, by), p, loop)
		out = append(out, ClockShift{Shift: by, DaysAtTarget: r.DaysAtTarget, WarmShare: r.WarmShare, Cost: r.Cost})
	}
	return out
}

// shiftedDays are the days with each claim created by later (earlier when negative) within its
// day: what passes the day's end comes round to its start, so every day keeps its claims and
// their lifetimes, and a schedule meets the same demand at other hours.
func shiftedDays(ds []*replay.Trace, by time.Duration) []*replay.Trace {
	out := make([]*replay.Trace, len(ds))
	for i, d := range ds {
		moved := *d
		moved.Arrivals = make([]replay.Arrival, len(d.Arrivals))
		for j, a := range d.Arrivals {
			at := (a.At + by) % d.Duration
			if at < 0 {
				at += d.Duration
			}
			a.At = at
			moved.Arrivals[j] = a
		}
		slices.SortStableFunc(moved.Arrivals, func(x, y replay.Arrival) int { return cmp.Compare(x.At, y.At) })
		out[i] = &moved
	}
	return out
}

// uniqueInts are the distinct values, in their first order.
func uniqueInts(vs ...int) []int {
	var out []int
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
