package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/replay"
	"github.com/warmpool/warm-pool-autoscaling-keda/schedule"
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

// BusyWindow is the span of the day the history is busy in, as slots [Start, End): where a
// schedule's floor goes.
type BusyWindow struct{ Start, End int }

// busyWindow finds it: from the first busy slot to the last. ok is false when no slot is busy,
// or the window leaves fewer than minQuietSlots out.
func busyWindow(ds []*replay.Trace, day time.Duration) (BusyWindow, bool) {
	var arrivals [slotsPerDay]float64
	for _, d := range ds {
		for _, a := range d.Arrivals {
			arrivals[min(int(a.At*slotsPerDay/day), slotsPerDay-1)]++
		}
	}
	peak := 0.0
	for _, n := range arrivals {
		peak = max(peak, n)
	}
	w := BusyWindow{Start: -1}
	for i, n := range arrivals {
		if peak > 0 && n >= busyShare*peak {
			if w.Start < 0 {
				w.Start = i
			}
			w.End = i + 1
		}
	}
	if w.Start < 0 || w.End-w.Start > slotsPerDay-minQuietSlots {
		return BusyWindow{}, false
	}
	return w, true
}

// window is the schedule window that keeps warm sandboxes through w, as the program renders it:
// the slots as hours of a 24 h day in UTC (the history's days are aligned to UTC midnight).
func (w BusyWindow) window(warm int) schedule.Window {
	hours := func(slot int) string { return fmt.Sprintf("0 %d * * *", slot*24/slotsPerDay%24) }
	return schedule.Window{Start: hours(w.Start), End: hours(w.End), Timezone: schedule.DefaultTimezone, Warm: warm}
}

// inForce says whether at (from the day's start) lies in the window, for a day of length day.
func (w BusyWindow) inForce(at, day time.Duration) bool {
	return at >= time.Duration(w.Start)*day/slotsPerDay && at < time.Duration(w.End)*day/slotsPerDay
}

func (w BusyWindow) String() string {
	return fmt.Sprintf("%02d:00-%02d:00 UTC", w.Start*24/slotsPerDay, w.End*24/slotsPerDay)
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
// with a floor of warm sandboxes through the busy window, by that floor.
func scheduleLadder(p Params, bound int, s components.Sizing, w BusyWindow, headroom int) Ladder {
	name := fmt.Sprintf("%s, headroom %d, schedule %s", arrivalsLadderName(p), headroom, w)
	return stamped(Ladder{Name: name, Levels: bound - 1, Raise: func(level, k int) (Candidate, bool) {
		// the margin is spares all day, not a higher floor by day
		if headroom+k >= bound {
			return Candidate{}, false
		}
		return scheduleLadder(p, bound, s, w, headroom+k).At(level), true
	}, At: func(i int) Candidate {
		warm := i + 1
		sw := s
		sw.Schedule = []schedule.Window{w.window(warm)}
		win := sw.Schedule[0]
		config := []Setting{set("minReplicas", 1), set("maxReplicas", bound), set("sizing.policy", components.SizingArrivals),
			set("sizing.bootSeconds", s.BootSeconds), set("sizing.warmHitTarget", s.WarmHitTarget),
			set("sizing.schedule[0].start", win.Start), set("sizing.schedule[0].end", win.End),
			set("sizing.schedule[0].timezone", win.Timezone), set("sizing.schedule[0].warm", warm)}
		if s.SandboxesPerNode > 1 {
			config = append(config, set("sizing.sandboxesPerNode", s.SandboxesPerNode))
		}
		if headroom > 0 {
			config = append(config, set("headroom", headroom))
		}
		return autoscaled(Candidate{Name: fmt.Sprintf("%s, warm %d", name, warm), Config: config}, func(d replay.Demand) float64 {
			floor := 0.0
			if w.inForce(d.At, p.Day) {
				floor = float64(warm)
			}
			return components.ArrivalsDesired(sw, headroom, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), floor)
		}, bound)
	}})
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
