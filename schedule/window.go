// Package schedule is a warm pool's time-of-day floors as KEDA's cron trigger reads them: the
// program validates and renders them, verify and the model evaluate them, all with this one
// reading of a cron window.
package schedule

import (
	"fmt"
	"time"
	// The zones a window names are checked and read wherever the program runs, not only where
	// the host has a zoneinfo database.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
)

// Window is a time-of-day floor of warm sandboxes: between Start and End (cron
// expressions in Timezone) the pool keeps at least Warm spares, whatever the arrivals say. It is
// a KEDA cron trigger beside the arrivals triggers, read by the formula as a floor.
type Window struct {
	Start, End string
	Timezone   string // an IANA name; UTC when empty in config
	Warm       int
}

// DefaultTimezone is the zone a window without one is read in.
const DefaultTimezone = "UTC"

// MaxWindows bounds a pool's schedule: one window per hour of the day is more than a
// day's shape needs, and each window is a trigger KEDA evaluates every poll.
const MaxWindows = 24

// cronParser parses as KEDA v2.21's cron scaler does (pkg/scalers/cron_scaler.go): five
// fields, no seconds and no @descriptors, so what the program accepts KEDA accepts.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// TriggerName is the name of the i-th window's trigger, the variable the formula reads.
func TriggerName(i int) string { return fmt.Sprintf("schedule_%d", i) }

// parsed is the window's two schedules and its zone, or the first thing wrong with them.
func (w Window) parsed() (start, end cron.Schedule, loc *time.Location, err error) {
	if start, err = cronParser.Parse(w.Start); err != nil {
		return nil, nil, nil, fmt.Errorf("start %q is not a five-field cron expression (minute hour day-of-month month day-of-week, as KEDA's cron trigger reads it): %v", w.Start, err)
	}
	if end, err = cronParser.Parse(w.End); err != nil {
		return nil, nil, nil, fmt.Errorf("end %q is not a five-field cron expression (minute hour day-of-month month day-of-week, as KEDA's cron trigger reads it): %v", w.End, err)
	}
	if w.Start == w.End {
		return nil, nil, nil, fmt.Errorf("start and end are both %q; KEDA refuses a window that ends when it starts", w.Start)
	}
	if loc, err = Zone(w.Timezone); err != nil {
		return nil, nil, nil, fmt.Errorf("timezone %w", err)
	}
	return start, end, loc, nil
}

// Zone loads name as a window reads it: an IANA name, never empty or "Local" (the host's zone,
// which differs between the machine that plans and the cluster that runs).
func Zone(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as UTC or Europe/Berlin", name)
	}
	return loc, nil
}

// Check says what is wrong with the window's schedules and zone, nil if KEDA can run it.
func (w Window) Check() error {
	_, _, _, err := w.parsed()
	return err
}

// Active reports whether the window is in force at t, as KEDA's cron scaler decides it: the
// window is open when its next end comes before its next start.
func (w Window) Active(t time.Time) (bool, error) {
	start, end, loc, err := w.parsed()
	if err != nil {
		return false, err
	}
	now := t.In(loc)
	// KEDA's test, upstream's two branches reduced: both next times are after now, so the
	// window is open exactly when the next end does not come after the next start.
	return !start.Next(now).Before(end.Next(now)), nil
}

// Value is the window's trigger value at t: Warm inside the window, 0 outside (KEDA's cron
// scaler's metric).
func (w Window) Value(t time.Time) (float64, error) {
	on, err := w.Active(t)
	if err != nil || !on {
		return 0, err
	}
	return float64(w.Warm), nil
}

// Floor is the largest warm count of the windows in force at t (0 if none is).
func Floor(windows []Window, t time.Time) (float64, error) {
	floor := 0.0
	for i, w := range windows {
		v, err := w.Value(t)
		if err != nil {
			return 0, fmt.Errorf("schedule[%d]: %w", i, err)
		}
		floor = max(floor, v)
	}
	return floor, nil
}
