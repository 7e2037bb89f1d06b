package verifier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// A formula-sized pool (the arrivals policy) is not a function of the claims held: its
// readings move as claims age out of the exporter's windows, whether or not demand changed. So
// each step reads the exporter as KEDA does (the pool's URL, each trigger's valueLocation),
// evaluates the live formula, and holds spec.replicas to the decision on a reading the HPA
// could have used: one that shows the step's demand (active_claims = the claims held now) and
// was taken no earlier than one polling interval plus one HPA sync before spec.replicas took
// its value. It retries with fresh readings until one agrees or the step's time runs out, and
// says what it read each time.

// formulaOutcome is what a formula wait saw.
type formulaOutcome struct {
	matched   *report.FormulaReading // the reading spec.replicas agreed with; nil if none did
	spec      int64                  // spec.replicas at the end
	specSince time.Time              // when spec.replicas was first seen at that value
	seen      []int64                // distinct spec.replicas values, in order
	readings  []report.FormulaReading
	err       error
}

// formulaWindow is how far before the decision a reading still counts: one polling interval
// plus one HPA sync.
func (r *Runner) formulaWindow() time.Duration { return r.pollingInterval + r.cfg.HPASync }

// formulaWait reads the pool and the exporter every poll interval until a counted reading's
// decision equals spec.replicas (and, with floor set, equals the floor too), or timeout
// passes. With untilLongWindow the timeout is extended by the exporter's long window (a pool
// whose claims are gone still counts their arrivals that long). With arrived (a claim was
// created at changedAt) a reading counts only while that claim is inside the exporter's long
// window: later, every window may have emptied and a pool that never followed the demand
// would agree with the formula at rest. quiet prints only readings that differ from the one
// before. A read of the pool or the exporter that fails is printed and retried (the timeout
// then reports the last failure); an exporter answer without a trigger's field, or a formula
// that does not evaluate, ends the wait at once.
func (r *Runner) formulaWait(ctx context.Context, n int, changedAt time.Time, timeout time.Duration, floor *int64, untilLongWindow, arrived, quiet bool) formulaOutcome {
	w := r.formulaWindow()
	start := time.Now()
	deadline := start.Add(timeout)
	extended := !untilLongWindow
	var out formulaOutcome
	type timed struct {
		at time.Time
		fr report.FormulaReading
	}
	var hist []timed
	lastPrinted := ""
	show := func(at time.Time, line string) {
		if !quiet || line != lastPrinted {
			r.rep.Printf("  [reading] +%s %s", secs(at.Sub(changedAt).Seconds()), line)
			lastPrinted = line
		}
	}
	read := func(ctx context.Context) (bool, error) {
		p, err := r.readPoolNow(ctx)
		if err != nil {
			show(time.Now(), fmt.Sprintf("spec.replicas unreadable (%v)", err))
			return false, err
		}
		if len(out.seen) == 0 || out.spec != p.Spec {
			out.spec, out.specSince = p.Spec, time.Now()
			out.seen = append(out.seen, p.Spec)
		}
		d, err := r.demand.Read(ctx)
		at := time.Now()
		if err != nil {
			show(at, fmt.Sprintf("exporter unreadable (%v); spec.replicas=%d", err, out.spec))
			return false, fmt.Errorf("reading the exporter: %w", err)
		}
		learned := false
		if !extended {
			extended, learned, deadline = true, true, deadline.Add(d.longWindow())
			if lw := d.longWindow(); lw > 0 {
				r.rep.Printf("  the exporter's long arrival window is %s: waiting up to %s for it to empty", lw, (timeout + lw).Round(time.Second))
			}
		}
		in, err := r.formula.inputs(d)
		if err != nil {
			return false, poll.Stop(err)
		}
		want, v, err := r.formulaDecision(in)
		if err != nil {
			return false, poll.Stop(err)
		}
		aged := arrived && d.longWindow() > 0 && at.Sub(changedAt) > d.longWindow()
		fr := report.FormulaReading{AtSeconds: at.Sub(changedAt).Seconds(), Inputs: in, ActiveClaims: d.ActiveClaims, ReadAt: d.ReadAt,
			Value: v, Want: want, SpecReplicas: out.spec, Counted: d.ActiveClaims == int64(n) && !aged}
		hist = append(hist, timed{at, fr})
		out.readings = append(out.readings, fr)
		line := fmt.Sprintf("%s active_claims=%d read_at=%s -> formula %g -> clamp(ceil(%g/%g), %d, %d)=%d; spec.replicas=%d",
			formatInputs(in), d.ActiveClaims, d.ReadAt, v, v, r.target, r.min, r.max, want, out.spec)
		switch {
		case d.ActiveClaims != int64(n):
			line += fmt.Sprintf(" (not counted: the exporter does not show the %d claim(s) held yet)", n)
		case aged:
			line += fmt.Sprintf(" (not counted: the step's claim has left the exporter's long window of %s, so this reading no longer carries the demand the step added)", d.longWindow())
		}
		show(at, line)
		// Newest first: the latest reading that agrees and the HPA could have used.
		for i := len(hist) - 1; i >= 0; i-- {
			h := hist[i]
			if h.fr.Counted && h.fr.Want == out.spec && !h.at.Before(out.specSince.Add(-w)) && (floor == nil || *floor == out.spec) {
				fr := h.fr
				out.matched = &fr
				return true, nil
			}
		}
		if learned && d.longWindow() > 0 {
			return false, poll.Stop(errLongWindow) // wait on to the extended deadline
		}
		return false, nil
	}
	wait := poll.Wait{Timeout: timeout, Interval: r.cfg.Poll}
	if quiet {
		wait.Every = progressEvery
		wait.Progress = func(poll.Status) {
			if time.Since(start) >= progressEvery {
				r.rep.Printf("  still waiting (%s elapsed, %d readings; last: %s)", time.Since(start).Round(time.Second), len(hist), lastPrinted)
			}
		}
	}
	err := wait.Until(ctx, read)
	if errors.Is(err, errLongWindow) {
		wait.Timeout = max(time.Until(deadline), r.cfg.Poll) // at least one more reading
		err = wait.Until(ctx, read)
	}
	var nr *poll.NotReached
	switch {
	case err == nil:
	case ctx.Err() != nil:
		out.err = ctx.Err()
	case errors.As(err, &nr) && len(out.seen) == 0:
		out.err = fmt.Errorf("%w after %s: spec.replicas was never read; %d of %d reads failed, the last read error: %v",
			errTimeout, time.Since(start).Round(time.Millisecond), nr.Failed, nr.Reads, nr.LastErr)
	case errors.As(err, &nr):
		failed := ""
		if nr.LastErr != nil {
			failed = fmt.Sprintf("; %d of %d reads failed, the last read error: %v", nr.Failed, nr.Reads, nr.LastErr)
		}
		out.err = fmt.Errorf("%w after %s: no reading the HPA could have used (taken within pollingInterval %s + HPA sync %s = %s of spec.replicas=%d, showing %d claim(s)) decides %s%s",
			errTimeout, time.Since(start).Round(time.Millisecond), r.pollingInterval, r.cfg.HPASync, w, out.spec, n, wantWord(floor, out.spec), failed)
	default:
		out.err = err
	}
	return out
}

// errLongWindow ends a formula wait's first part: the exporter's long window, now known,
// extends its deadline.
var errLongWindow = errors.New("the exporter's long window extends the wait")

func wantWord(floor *int64, spec int64) string {
	if floor != nil {
		return fmt.Sprintf("the floor %d with spec.replicas at it", *floor)
	}
	return fmt.Sprintf("%d", spec)
}

// lastReadings prints, for a FAIL's evidence, the last few readings that counted (the ones the
// step was held to), else the last few taken.
func lastReadings(rs []report.FormulaReading, k int) string {
	if len(rs) == 0 {
		return "no reading was taken"
	}
	var pick []report.FormulaReading
	for _, x := range rs {
		if x.Counted {
			pick = append(pick, x)
		}
	}
	what := "counted"
	if len(pick) == 0 {
		pick, what = rs, "taken (none counted)"
	}
	from := max(0, len(pick)-k)
	var parts []string
	for _, x := range pick[from:] {
		parts = append(parts, fmt.Sprintf("+%s %s active_claims=%d -> %g -> %d vs spec.replicas=%d", secs(x.AtSeconds), formatInputs(x.Inputs), x.ActiveClaims, x.Value, x.Want, x.SpecReplicas))
	}
	return fmt.Sprintf("%d readings, %d %s, the last %d of those: %s", len(rs), len(pick), what, len(pick)-from, strings.Join(parts, "; "))
}

// distinctWants are the formula's answers over the readings, in order.
func distinctWants(rs []report.FormulaReading) []int64 {
	var out []int64
	for _, x := range rs {
		if len(out) == 0 || out[len(out)-1] != x.Want {
			out = append(out, x.Want)
		}
	}
	return out
}

// awaitFormulaStep is awaitStep for a formula-sized pool.
func (r *Runner) awaitFormulaStep(ctx context.Context, dir string, n int, changedAt time.Time) {
	prev := r.lastExpected
	timeout := r.cfg.StepTimeout
	if dir == "down" {
		timeout += r.downPace.total()
	}
	o := r.formulaWait(ctx, n, changedAt, timeout, nil, false, dir == "up", false)
	step := report.Step{Claims: n, SpecReplicas: i64(o.spec), Seen: o.seen, FormulaReadings: o.readings}
	name := fmt.Sprintf("scale %s: %d claim(s) -> spec.replicas held to the formula", dir, n)
	if o.err != nil || o.matched == nil {
		if len(o.readings) > 0 {
			step.Expected = o.readings[len(o.readings)-1].Want
		}
		r.addStep(dir, step)
		if ctx.Err() != nil {
			return
		}
		r.rep.Fail("scaling", name, fmt.Sprintf("%v; spec.replicas values seen %s; the formula's answers %s; %s; %s",
			o.err, joinInts(o.seen), joinInts(distinctWants(o.readings)), lastReadings(o.readings, 5), r.readPath(ctx, true)))
		return
	}
	m := o.matched
	step.Expected = m.Want
	how := "unchanged from the previous level, as expected (no decision to time)"
	if o.spec != prev {
		lat := o.specSince.Sub(changedAt)
		if lat < 0 {
			lat = 0
		}
		step.LatencySeconds = f64(lat.Seconds())
		how = fmt.Sprintf("took that value %s after the demand changed", secs(lat.Seconds()))
		if dir == "up" && lat > r.upDecision {
			r.upDecision = lat
		}
	}
	r.addStep(dir, step)
	r.lastExpected = o.spec
	r.rep.Printf("[reading] %d claim(s) spec.replicas=%d on %s (%s)", n, o.spec, formatInputs(m.Inputs), how)
	r.rep.Pass("scaling", name, fmt.Sprintf("spec.replicas=%d = clamp(ceil(%g/%g), %d, %d) on the reading taken +%s after the demand changed (%s active_claims=%d read_at=%s), within pollingInterval %s + HPA sync %s of the decision; %s; spec.replicas values seen %s; the formula's answers over %d reading(s) %s",
		o.spec, m.Value, r.target, r.min, r.max, secs(m.AtSeconds), formatInputs(m.Inputs), m.ActiveClaims, m.ReadAt,
		r.pollingInterval, r.cfg.HPASync, how, joinInts(o.seen), len(o.readings), joinInts(distinctWants(o.readings))))
}

// formulaFloor waits for a formula-sized pool to come back to its floor: no claims, every
// arrival aged out of the exporter's windows, and spec.replicas at the formula's decision on
// that. It returns the pool's reading when it holds.
func (r *Runner) formulaFloor(ctx context.Context, ph string) (poolReading, time.Duration, error) {
	floor, err := r.zeroDecision()
	if err != nil {
		r.rep.Fail(ph, "the pool holds the floor", err.Error())
		return poolReading{}, 0, errStop
	}
	began := time.Now()
	r.rep.Printf("waiting for the arrivals to leave the exporter's windows and spec.replicas to reach the formula's answer at no demand, %d", floor)
	o := r.formulaWait(ctx, 0, began, r.cfg.StepTimeout+r.formulaWindow(), &floor, true, false, true)
	if o.err != nil || o.matched == nil {
		if ctx.Err() != nil {
			return poolReading{}, 0, ctx.Err()
		}
		r.rep.Fail(ph, "the pool holds the floor", fmt.Sprintf("%v; spec.replicas values seen %s; %s", o.err, joinInts(o.seen), lastReadings(o.readings, 3)))
		return poolReading{}, 0, errStop
	}
	r.rep.Pass(ph, "the pool holds the floor", fmt.Sprintf("0 claims, %s: the formula gives %g, so spec.replicas=%d, the floor (minReplicaCount=%d)",
		formatInputs(o.matched.Inputs), o.matched.Value, o.spec, r.min))
	p, err := r.readPoolNow(ctx)
	if err != nil {
		return poolReading{Spec: o.spec}, time.Since(began), nil
	}
	return p, time.Since(began), nil
}
