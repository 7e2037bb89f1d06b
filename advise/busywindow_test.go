package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/warmpool/warm-pool-autoscaling-keda/replay"
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
			got, ok := busyWindows([]*replay.Trace{tc.day}, 24*time.Hour)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != nil, ok)
		})
	}
	ws := BusyWindows{{7, 10}, {17, 21}}
	assert.Equal(t, "07:00-10:00 and 17:00-21:00 UTC", ws.String())
	assert.True(t, ws.inForce(18*time.Hour, 24*time.Hour))
	assert.False(t, ws.inForce(12*time.Hour, 24*time.Hour))
	if got := ws.windows(3); len(got) != 2 || got[1].Start != "0 17 * * *" || got[1].End != "0 21 * * *" || got[1].Warm != 3 {
		t.Errorf("windows(3) = %+v, want the evening window 0 17-0 21 with 3 warm second", got)
	}
}
