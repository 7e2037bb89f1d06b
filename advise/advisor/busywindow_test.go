package advisor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// dayWithArrivals is one 24 h day with n arrivals in each of the given hours.
func dayWithArrivals(n int, hours ...int) *replay.Trace {
	d := &replay.Trace{Duration: 24 * time.Hour}
	for _, h := range hours {
		for i := range n {
			d.Arrivals = append(d.Arrivals, replay.Arrival{At: time.Duration(h)*time.Hour + time.Duration(i)*time.Minute, Lifetime: time.Minute})
		}
	}
	return d
}

// utcDays are the 24 h days of UTC, advise's default.
var utcDays = dayClock{day: 24 * time.Hour, loc: time.UTC}

// A day with a morning and an evening peak gets a window each; a lull shorter than
// minQuietSlots stays inside its window; a day busy nearly all day, or never, gets none; more
// spans than maxBusyWindows keep the closest together.
func TestBusyWindowsSplitAtALongQuiet(t *testing.T) {
	quiet := func(d *replay.Trace) *replay.Trace { // one claim an hour all day: below busyShare
		for h := range 24 {
			d.Arrivals = append(d.Arrivals, replay.Arrival{At: time.Duration(h)*time.Hour + 30*time.Minute, Lifetime: time.Minute})
		}
		return d
	}
	cases := []struct {
		name string
		day  *replay.Trace
		want BusyWindows
	}{
		{"two peaks, 6 h apart", quiet(dayWithArrivals(20, 7, 8, 9, 17, 18, 19, 20)), BusyWindows{{7, 10}, {17, 21}}},
		{"a 2 h lunch lull", quiet(dayWithArrivals(20, 9, 10, 11, 14, 15, 16, 17)), BusyWindows{{9, 18}}},
		{"five spans, kept to three", quiet(dayWithArrivals(20, 0, 5, 10, 16, 22)), BusyWindows{{0, 11}, {16, 17}, {22, 23}}},
		{"busy all day", dayWithArrivals(20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21), nil},
		{"no claim", &replay.Trace{Duration: 24 * time.Hour}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := busyWindows([]*replay.Trace{tc.day}, utcDays)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != nil, ok)
		})
	}
	ws := BusyWindows{{7, 10}, {17, 21}}
	assert.Equal(t, "07:00-10:00 and 17:00-21:00 UTC", ws.describe(utcDays))
	assert.True(t, ws.inForce(replay.Demand{At: 18 * time.Hour}, utcDays))
	assert.False(t, ws.inForce(replay.Demand{At: 12 * time.Hour}, utcDays))
	if got := ws.windows(3, utcDays); len(got) != 2 || got[1].Start != "0 17 * * *" || got[1].End != "0 21 * * *" || got[1].Warm != 3 {
		t.Errorf("windows(3) = %+v, want the evening window 0 17-0 21 with 3 warm second", got)
	}
}

// officeHours is a history of the pool "code" in zone loc: on each of n local days from the
// first, 20 claims from 09:30 and 20 from 17:30 on the clock there, a minute apart, each held a
// minute.
func officeHours(t *testing.T, loc *time.Location, first time.Time, n int) *history.History {
	t.Helper()
	var b strings.Builder
	b.WriteString("pool,claim,created,deleted\n")
	y, m, d := first.Date()
	for i := range n {
		for _, hour := range []int{9, 17} {
			for j := range 20 {
				at := time.Date(y, m, d+i, hour, 30+j, 0, 0, loc)
				fmt.Fprintf(&b, "code,c-%d-%d-%d,%s,%s\n", i, hour, j, at.Format(time.RFC3339), at.Add(time.Minute).Format(time.RFC3339))
			}
		}
	}
	h, err := history.Read(strings.NewReader(b.String()), "office.csv")
	require.NoError(t, err)
	return h
}

// With --timezone the days run from the zone's midnight to the next (23 h on the spring-forward
// day, 25 h on the fall-back day), and the busy hours are the clock's there: a team's 09:30 peak
// is one window "0 9 * * *" in its zone all year, where UTC's days see it move an hour at the
// change and must keep a floor through both hours.
func TestBusyWindowsFollowTheZonesClockAcrossDaylightSaving(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	zoned := dayClock{day: 24 * time.Hour, loc: berlin}
	// 2026-03-26 .. 04-01: Berlin springs forward on 03-29 (UTC+1 -> UTC+2).
	h := officeHours(t, berlin, time.Date(2026, 3, 26, 0, 0, 0, 0, berlin), 7)

	ds := days(h, "code", 24*time.Hour, berlin)
	require.Len(t, ds, 7)
	for i, d := range ds {
		assert.Equal(t, time.Date(2026, 3, 26+i, 0, 0, 0, 0, berlin), d.Start, "day %d starts at Berlin's midnight", i+1)
		require.Len(t, d.Arrivals, 40, "day %d", i+1)
		assert.Equal(t, "09:30", d.Start.Add(d.Arrivals[0].At).In(berlin).Format("15:04"), "day %d's first claim", i+1)
	}
	assert.Equal(t, 23*time.Hour, ds[3].Duration, "03-29 is 23 h long in Berlin")
	assert.Equal(t, 8*time.Hour+30*time.Minute, ds[3].Arrivals[0].At, "09:30 is 8.5 h after midnight that day")

	ws, ok := busyWindows(ds, zoned)
	require.True(t, ok)
	assert.Equal(t, BusyWindows{{9, 10}, {17, 18}}, ws)
	assert.Equal(t, "09:00-10:00 and 17:00-18:00 Europe/Berlin", ws.describe(zoned))
	windows := ws.windows(2, zoned)
	assert.Equal(t, schedule.Window{Start: "0 9 * * *", End: "0 10 * * *", Timezone: "Europe/Berlin", Warm: 2}, windows[0])
	// The model and KEDA agree on when the floor is in force, on the 23 h day too.
	at := ds[3].Arrivals[0].At
	assert.True(t, ws.inForce(replay.Demand{At: at, Clock: ds[3].Clock(at)}, zoned))
	on, err := windows[0].Active(ds[3].Clock(at))
	require.NoError(t, err)
	assert.True(t, on, "KEDA's cron trigger in Europe/Berlin is open at 09:30 on 03-29")
	assert.False(t, ws.inForce(replay.Demand{At: 9*time.Hour + 30*time.Minute, Clock: ds[3].Clock(9*time.Hour + 30*time.Minute)}, zoned),
		"10:30 on the clock that day is out of the window, though 9.5 h after midnight")

	// UTC's days see 09:30 Berlin at 08:30, then at 07:30: the floor must span both hours.
	utc, ok := busyWindows(days(h, "code", 24*time.Hour, time.UTC), utcDays)
	require.True(t, ok)
	assert.Equal(t, BusyWindows{{7, 9}, {15, 17}}, utc)

	// 2026-10-24 .. 10-26: Berlin falls back on 10-25.
	autumn := days(officeHours(t, berlin, time.Date(2026, 10, 24, 0, 0, 0, 0, berlin), 3), "code", 24*time.Hour, berlin)
	require.Len(t, autumn, 3)
	assert.Equal(t, 25*time.Hour, autumn[1].Duration, "10-25 is 25 h long in Berlin")
	ws, ok = busyWindows(autumn, zoned)
	require.True(t, ok)
	assert.Equal(t, BusyWindows{{9, 10}, {17, 18}}, ws)
}

// The busiest day is the highest peak; among days of one peak, the one with the most claims.
func TestBusiestDayIsTheHighestPeakThenTheMostClaims(t *testing.T) {
	day := func(starts ...int) *replay.Trace {
		tr := &replay.Trace{Duration: time.Hour}
		for _, s := range starts {
			tr.Arrivals = append(tr.Arrivals, replay.Arrival{At: time.Duration(s) * time.Minute, Lifetime: 5 * time.Minute})
		}
		return tr
	}
	quiet := day(0, 1)            // peak 2, 2 claims
	busy := day(0, 1, 10, 11, 20) // peak 2, 5 claims
	high := day(0, 1, 2)          // peak 3
	assert.Equal(t, 1, busiestDay([]*replay.Trace{quiet, busy}))
	assert.Equal(t, 2, busiestDay([]*replay.Trace{quiet, busy, high}))
	assert.Equal(t, 0, busiestDay([]*replay.Trace{high, busy}))
}
