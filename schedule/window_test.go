package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A window is in force from its start up to its end, in its own zone, as KEDA's cron scaler
// decides it; a window across midnight holds through it; outside, its value is 0.
func TestWindowIsInForceBetweenItsStartAndEnd(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	workday := Window{Start: "0 8 * * 1-5", End: "0 18 * * 1-5", Timezone: "Europe/Berlin", Warm: 6}
	night := Window{Start: "30 22 * * *", End: "0 6 * * *", Timezone: "UTC", Warm: 2}
	cases := []struct {
		w    Window
		at   string
		want bool
	}{
		{workday, "2026-12-07T07:30:00Z", true},  // Monday 08:30 in Berlin (UTC+1)
		{workday, "2026-12-07T06:30:00Z", false}, // 07:30 in Berlin
		{workday, "2026-12-07T16:59:00Z", true},  // 17:59 in Berlin
		{workday, "2026-12-07T17:01:00Z", false}, // 18:01 in Berlin
		{workday, "2026-12-05T10:00:00Z", false}, // Saturday
		{night, "2026-12-05T23:00:00Z", true},
		{night, "2026-12-06T05:59:00Z", true},
		{night, "2026-12-06T06:01:00Z", false},
		{night, "2026-12-06T22:29:00Z", false},
	}
	for _, c := range cases {
		on, err := c.w.Active(at(c.at))
		require.NoError(t, err)
		assert.Equalf(t, c.want, on, "%s-%s %s at %s", c.w.Start, c.w.End, c.w.Timezone, c.at)
		v, err := c.w.Value(at(c.at))
		require.NoError(t, err)
		if c.want {
			assert.Equal(t, float64(c.w.Warm), v)
		} else {
			assert.Zero(t, v)
		}
	}
	windows := []Window{workday, night, {Start: "0 12 * * *", End: "0 13 * * *", Timezone: "UTC", Warm: 9}}
	floor, err := Floor(windows, at("2026-12-07T12:30:00Z"))
	require.NoError(t, err)
	assert.Equal(t, 9.0, floor, "the largest window in force")
	floor, err = Floor(windows, at("2026-12-07T20:00:00Z"))
	require.NoError(t, err)
	assert.Zero(t, floor)
}

// What KEDA would refuse is refused, each saying which part.
func TestWindowCheck(t *testing.T) {
	ok := Window{Start: "0 8 * * 1-5", End: "0 18 * * 1-5", Timezone: "America/New_York", Warm: 1}
	require.NoError(t, ok.Check())
	for want, w := range map[string]Window{
		`start "@hourly"`:          {Start: "@hourly", End: "0 18 * * *", Timezone: "UTC"},
		`end "0 0 18 * * *"`:       {Start: "0 8 * * *", End: "0 0 18 * * *", Timezone: "UTC"},
		`start and end are both`:   {Start: "0 8 * * *", End: "0 8 * * *", Timezone: "UTC"},
		`timezone "Nowhere/Place"`: {Start: "0 8 * * *", End: "0 18 * * *", Timezone: "Nowhere/Place"},
		`timezone ""`:              {Start: "0 8 * * *", End: "0 18 * * *"},
	} {
		err := w.Check()
		require.Errorf(t, err, "%+v", w)
		assert.Contains(t, err.Error(), want)
	}
}
