package advisor

import (
	"bytes"
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// workingDayBursts are n days on which, through the working day (09:00-17:00 UTC), a job fans
// out 10 claims every half hour from 09:10, each held 5 minutes; nothing comes at night.
func workingDayBursts(n int) []*replay.Trace {
	var out []*replay.Trace
	for i := range n {
		d := &replay.Trace{Start: time.Date(2026, 11, 2+i, 0, 0, 0, 0, time.UTC), Duration: 24 * time.Hour}
		for at := 9*time.Hour + 10*time.Minute; at < 17*time.Hour; at += 30 * time.Minute {
			for j := range 10 {
				d.Arrivals = append(d.Arrivals, replay.Arrival{At: at + time.Duration(j)*50*time.Millisecond, Lifetime: 5 * time.Minute})
			}
		}
		out = append(out, d)
	}
	return out
}

// A window whose floor never rises above what the setting keeps warm anyway buys nothing, and
// its config lines would do nothing: the night window of a floor of 12 (no claim comes at night)
// is left out, the working day's (where it keeps the half-hourly bursts warm) is kept; a
// floor of 1 under a headroom of 8 never binds in either window, so the setting is the arrivals
// policy at that headroom, with no schedule at all.
func TestAScheduleWindowThatNeverBindsIsLeftOut(t *testing.T) {
	ds := workingDayBursts(5)
	p := DefaultParams()
	loop := p.loop()
	windows := BusyWindows{{Start: 1, End: 3}, {Start: 9, End: 17}}

	binding := replayDays(scheduleLadder(p, 20, arrivalsSizing(p), windows, 0).At(11), ds, p, loop)
	kept, dropped := withoutDeadWindows(binding, ds, p, loop)
	assert.Equal(t, BusyWindows{{Start: 1, End: 3}}, dropped)
	assert.Equal(t, "arrivals, rounded to 8 per node, headroom 0, schedule 09:00-17:00 UTC, warm 12", kept.Name)
	assert.Less(t, kept.Cost, binding.Cost, "the night's floor costs nodes and buys no warm hit")
	assert.Equal(t, binding.WarmShare, kept.WarmShare)
	assert.Contains(t, kept.Config, Setting{"sizing.schedule[0].start", "0 9 * * *"})
	assert.NotContains(t, keys(kept.Config), "sizing.schedule[1].start")

	dead := replayDays(scheduleLadder(p, 20, arrivalsSizing(p), windows, 8).At(0), ds, p, loop)
	plain, dropped := withoutDeadWindows(dead, ds, p, loop)
	assert.Equal(t, windows, dropped)
	want := replayDays(plainArrivals(p, 20, 8), ds, p, loop)
	assert.Equal(t, "arrivals, rounded to 8 per node, headroom 8", plain.Name)
	assert.Equal(t, []float64{want.Cost, want.WarmShare}, []float64{plain.Cost, plain.WarmShare})
	assert.Equal(t, []float64{dead.Cost, dead.WarmShare}, []float64{plain.Cost, plain.WarmShare}, "a floor that never binds changes nothing the replay sees")
	for _, k := range keys(plain.Config) {
		assert.NotContains(t, k, "schedule")
	}
	assert.Nil(t, plain.schedule)
}

func keys(config []Setting) []string {
	var out []string
	for _, s := range config {
		out = append(out, s.Key)
	}
	return out
}

// A day's demand moved within the day keeps every claim and its lifetime; what passes midnight
// comes round to the day's start.
func TestShiftedDaysMoveTheDemandRoundTheDay(t *testing.T) {
	day := &replay.Trace{Start: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), Duration: 24 * time.Hour, Arrivals: []replay.Arrival{
		{At: 30 * time.Minute, Lifetime: time.Minute}, {At: 12 * time.Hour, Lifetime: 2 * time.Minute}, {At: 23*time.Hour + 30*time.Minute, Lifetime: 3 * time.Minute}}}
	later := shiftedDays([]*replay.Trace{day}, time.Hour)[0]
	assert.Equal(t, []replay.Arrival{{At: 30 * time.Minute, Lifetime: 3 * time.Minute}, {At: 90 * time.Minute, Lifetime: time.Minute}, {At: 13 * time.Hour, Lifetime: 2 * time.Minute}}, later.Arrivals)
	earlier := shiftedDays([]*replay.Trace{day}, -time.Hour)[0]
	assert.Equal(t, []replay.Arrival{{At: 11 * time.Hour, Lifetime: 2 * time.Minute}, {At: 22*time.Hour + 30*time.Minute, Lifetime: 3 * time.Minute}, {At: 23*time.Hour + 30*time.Minute, Lifetime: time.Minute}}, earlier.Arrivals)
	assert.Equal(t, 30*time.Minute, day.Arrivals[0].At, "the history's own days are not moved")
}

// A schedule is set on the hours the history was busy: demand that comes while its floor is
// warm is warm, the same demand at other hours is not. A burst of 16 at 09:00 each day under a
// floor of 16 from 08:00 to 10:00 and no headroom: an hour later the pool is still warm (the
// HPA's scale-down window holds it past the window's end), an hour earlier the burst comes as
// the window opens, before a sandbox has booted, and two hours either way there is no floor.
func TestClockShiftsReplayTheDemandAtOtherHours(t *testing.T) {
	var ds []*replay.Trace
	for i := range 5 {
		d := &replay.Trace{Start: time.Date(2026, 11, 2+i, 0, 0, 0, 0, time.UTC), Duration: 24 * time.Hour}
		for j := range 16 {
			d.Arrivals = append(d.Arrivals, replay.Arrival{At: 9*time.Hour + time.Duration(j)*50*time.Millisecond, Lifetime: 10 * time.Minute})
		}
		ds = append(ds, d)
	}
	p := DefaultParams()
	loop := p.loop()
	o := replayDays(scheduleLadder(p, 20, arrivalsSizing(p), BusyWindows{{Start: 8, End: 10}}, 0).At(15), ds, p, loop)
	require.Equal(t, 5, o.DaysAtTarget, "the burst in the window is warm")
	shifts := clockShifts(o, ds, p, loop)
	byShift := map[time.Duration]ClockShift{}
	for _, s := range shifts {
		byShift[s.Shift] = s
	}
	require.Len(t, byShift, 4)
	assert.Equal(t, 5, byShift[time.Hour].DaysAtTarget, "at 10:00 the pool is still warm")
	for _, by := range []time.Duration{-2 * time.Hour, -time.Hour, 2 * time.Hour} {
		assert.Equal(t, 0, byShift[by].DaysAtTarget, "shifted by %s the burst comes outside the window", by)
		assert.Less(t, byShift[by].WarmShare, 0.5, "shifted by %s", by)
	}
}

// The advice carries no config line that does nothing, and says what its schedule's hours are
// worth. Beside the working day's bursts, a steady trickle from 02:00 to 04:00 (a claim a minute,
// held a minute) makes those hours busy too, so the search lays a floor over both; the arrivals
// policy alone keeps the trickle warm, so the night's floor only costs, and the recommendation
// leaves it out. The bursts need their floor: an hour earlier or later the first or the last
// burst of the day comes outside it, and the shifts say so.
func TestTheAdviceCarriesNoDeadScheduleLine(t *testing.T) {
	ds := workingDayBursts(7)
	for _, d := range ds {
		for at := 2 * time.Hour; at < 4*time.Hour; at += time.Minute {
			d.Arrivals = append(d.Arrivals, replay.Arrival{At: at, Lifetime: time.Minute})
		}
		slices.SortFunc(d.Arrivals, func(a, b replay.Arrival) int { return cmp.Compare(a.At, b.At) })
	}
	p := DefaultParams()
	a, err := AdviseDays("ci", ds, p)
	require.NoError(t, err)
	require.NotNil(t, a.Recommended)
	assert.Equal(t, "arrivals, rounded to 8 per node, headroom 0, schedule 02:00-04:00 and 09:00-17:00 UTC, warm 9", a.Lowest.Name, "the search lays a floor over both busy spans")
	assert.Equal(t, "arrivals, rounded to 8 per node, headroom 0, schedule 09:00-17:00 UTC, warm 9", a.Recommended.Name)
	assert.Equal(t, "02:00-04:00 UTC", a.Dropped)
	assert.NotContains(t, keys(a.Recommended.Config), "sizing.schedule[1].start")
	assert.GreaterOrEqual(t, a.Recommended.DaysAtTarget, a.Need)
	_, dropped := withoutDeadWindows(*a.Recommended, ds, p, p.loop())
	assert.Empty(t, dropped, "every window left in the recommendation binds")

	require.Len(t, a.ClockShifts, 4)
	for _, c := range a.ClockShifts {
		assert.Less(t, c.DaysAtTarget, a.Recommended.DaysAtTarget, "shifted by %s", c.Shift)
	}
	var out bytes.Buffer
	WriteText(&out, []PoolAdvice{a}, p)
	assert.Contains(t, out.String(), "(recommended without the schedule 02:00-04:00 UTC: replayed without it")
	assert.Contains(t, out.String(), "with the same demand at other hours it gives (warm hits, days at 99%): 2 h earlier: ")
	assert.Contains(t, out.String(), "<- recommended")
	assert.NotContains(t, out.String(), "sizing.schedule[1]")
}
