package verifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// The cross-pool control: each pool gets its own ScaledObject reading its own URL, and the one
// exporter attributes each claim to its pool. A wiring mistake (a ScaledObject on another
// pool's URL, an exporter that counts one namespace for two pools) shows as a pool that moves
// under another pool's demand. So, one driven pool at a time: every pool settles at its floor,
// the load cap's claims go on the driven pool, and every pool's spec.replicas is read for the
// control window. The driven pool must rise; every other must read its floor at every reading.

const (
	crossPhase = "cross-pool"
	// crossSkipName is the check a one-pool stack SKIPs (never PASSes).
	crossSkipName = "demand on one pool moves only that pool's spec.replicas"
)

// crossMember is one pool of the stack as the cross-pool control sees it.
type crossMember struct {
	r      *Runner
	t      PoolTarget
	floor  int64
	series report.PoolSeries
}

// crossPool runs the cross-pool control after the pools' own phases. drivers are the runners
// of the pools this run drives; watcher makes a read-only runner for a pool it does not.
func crossPool(ctx context.Context, cfg Config, drivers []*Runner, all []PoolTarget, watcher func(PoolTarget) *Runner, rep *report.Report) {
	rep.Printf("== cross-pool control: demand on one pool moves only that pool's spec.replicas ==")
	if len(all) < 2 {
		why := fmt.Sprintf("the stack has one pool (%s), so there is no other pool to hold still; a stack with two pools or more (the pools config list) runs it", all[0].Name)
		rep.Skip(crossPhase, crossSkipName, why)
		rep.SetCrossPool(&report.CrossPool{Skipped: why})
		return
	}
	// A pool whose phases stopped early still holds this run's claims: they go first, by name.
	for _, d := range drivers {
		if held := d.rest.ownedClaims(); len(held) > 0 {
			deleted, err := d.rest.deleteAllClaims(ctx)
			rep.Printf("%s's phases left this run's claims %v: deleted %v (%v)", d.cfg.Pool, held, deleted, err)
		}
	}
	// Every pool's mapping gives its floor; a pool this run only watches is read quietly.
	var members []*crossMember
	var unmapped []string
	for _, t := range all {
		var r *Runner
		for _, d := range drivers {
			if d.cfg.Pool == t.Name && d.cfg.Namespace == t.Namespace {
				r = d
			}
		}
		if r == nil {
			r = watcher(t)
			quiet := newReport(io.Discard)
			r.rep = quiet.Watcher(t.Name, false)
			err := r.precondition(ctx)
			r.rep = rep.Watcher(t.Name, true)
			if err != nil {
				unmapped = append(unmapped, fmt.Sprintf("%s (watched only): %s", t.Name, strings.Join(quiet.Failures(), "; ")))
				continue
			}
		} else if !r.mapped {
			unmapped = append(unmapped, fmt.Sprintf("%s: its precondition failed above", t.Name))
			continue
		}
		floor, err := r.zeroDecision()
		if err != nil {
			unmapped = append(unmapped, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		members = append(members, &crossMember{r: r, t: t, floor: floor})
	}
	if len(unmapped) > 0 {
		why := "the floor of every pool must be known to hold the others to it; not known for " + strings.Join(unmapped, "; ")
		rep.Fail(crossPhase, "[cross-pool] every pool's mapping is readable", why)
		rep.SetCrossPool(&report.CrossPool{Skipped: why})
		return
	}
	var floors []string
	for _, m := range members {
		floors = append(floors, fmt.Sprintf("%s %d (%s)", m.t.Name, m.floor, m.r.sizing()))
	}
	rep.Printf("pools and their floors (the mapping at no demand): %s", strings.Join(floors, ", "))

	// Claims-sized pools first: they are back at their floor one sync after their claims go,
	// while an arrivals-sized pool counts its claims' arrivals for its long window.
	order := append([]*Runner(nil), drivers...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].formula == nil && order[j].formula != nil })
	var measured time.Duration
	for _, d := range drivers {
		measured = max(measured, d.upDecision)
	}
	window, how := windowFrom(cfg, measured, "slowest scale-up decision measured on the driven pools")
	cp := &report.CrossPool{}
	defer rep.SetCrossPool(cp)
	for i, d := range order {
		if ctx.Err() != nil {
			return
		}
		round := crossRound(ctx, cfg, rep, members, d, window, how, i+1, len(order))
		cp.Rounds = append(cp.Rounds, round)
	}
}

// crossRound drives one pool and reads every pool for the window.
func crossRound(ctx context.Context, cfg Config, rep *report.Report, members []*crossMember, d *Runner, window time.Duration, how string, i, n int) report.CrossPoolRound {
	driven := d.cfg.Pool
	tag := "[cross-pool] "
	round := report.CrossPoolRound{Driven: driven, Claims: d.cfg.LoadCap, WindowSeconds: window.Seconds(), Derivation: how}
	rep.Printf("-- %d/%d: %d claim(s) on %s; every pool's spec.replicas read for %s: %s --", i, n, d.cfg.LoadCap, driven, window.Round(time.Millisecond), how)

	// 1. Every pool at its floor, with no claims.
	var settled []string
	for _, m := range members {
		spec, ev, err := m.r.settleAtFloor(ctx, m.floor)
		if err != nil {
			if ctx.Err() != nil {
				return round
			}
			rep.Fail(crossPhase, fmt.Sprintf("%severy pool holds its floor before demand on %s", tag, driven), fmt.Sprintf("%s: %v", m.t.Name, err))
			return round
		}
		settled = append(settled, fmt.Sprintf("%s spec.replicas=%d (floor %d%s)", m.t.Name, spec, m.floor, ev))
	}
	rep.Pass(crossPhase, fmt.Sprintf("%severy pool holds its floor before demand on %s", tag, driven),
		"no claims in any pool; "+strings.Join(settled, ", "))

	// 2. The load on the driven pool.
	for k := 1; k <= d.cfg.LoadCap; k++ {
		if _, _, err := d.rest.createClaim(ctx, demandClaimName(k), d.cfg.Pool); err != nil {
			if ctx.Err() == nil {
				rep.Fail(crossPhase, fmt.Sprintf("%sdemand on %s is created", tag, driven), fmt.Sprintf("create sandboxclaim/%s in %s: %v", demandClaimName(k), d.cfg.Namespace, err))
				crossCleanup(ctx, rep, d, tag)
			}
			return round
		}
	}
	createdAt := time.Now()
	rep.Printf("claims now: %d on %s (%v in %s); the other pools hold none", d.cfg.LoadCap, driven, d.rest.ownedClaims(), d.cfg.Namespace)

	// 3. Every pool's spec.replicas for the window.
	for _, m := range members {
		m.series = report.PoolSeries{Name: m.t.Name, Namespace: m.t.Namespace, Floor: m.floor}
	}
	err := watchPools(ctx, cfg, rep, members, createdAt, window)
	for _, m := range members {
		round.Pools = append(round.Pools, m.series)
		rep.Printf("  %s spec.replicas over the window: %s", m.t.Name, describeSeries(m.series))
	}
	if ctx.Err() != nil {
		return round
	}
	if err != nil {
		rep.Fail(crossPhase, fmt.Sprintf("%sdemand on %s moves only %s's spec.replicas", tag, driven, driven), fmt.Sprintf("a read failed during the window: %v", err))
		crossCleanup(ctx, rep, d, tag)
		return round
	}

	// 4. The exporter's attribution: the claims count for the driven pool alone.
	var attr []string
	attrOK := true
	for _, m := range members {
		want := int64(0)
		if m.r == d {
			want = int64(d.cfg.LoadCap)
		}
		got, ev := m.r.exporterNow(ctx, want)
		attrOK = attrOK && got == want
		attr = append(attr, fmt.Sprintf("%s: %s (want active_claims=%d)", m.t.Name, ev, want))
	}
	rep.Judge(crossPhase, fmt.Sprintf("%sthe exporter counts the claims on %s for %s alone", tag, driven, driven), attrOK, strings.Join(attr, "; "))

	// 5. The verdicts, one per pool.
	for _, m := range members {
		if m.r == d {
			moved := false
			for _, p := range m.series.Series {
				moved = moved || p.SpecReplicas > m.floor
			}
			rep.Judge(crossPhase, fmt.Sprintf("%sdemand on %s moves %s's spec.replicas", tag, driven, driven), moved,
				fmt.Sprintf("%d claim(s) on %s; its spec.replicas over %s: %s; floor %d: %s", d.cfg.LoadCap, driven, window.Round(time.Millisecond), describeSeries(m.series), m.floor,
					map[bool]string{true: "it rose above its floor, so this window can show a pool moving", false: "it never rose above its floor, so a still pool elsewhere proves nothing"}[moved]))
			continue
		}
		flat := m.series.Readings >= 2 && len(m.series.Values) == 1 && m.series.Values[0] == m.floor
		verdict := fmt.Sprintf("every one of %d readings is its floor %d while %s held %d claim(s)", m.series.Readings, m.floor, driven, d.cfg.LoadCap)
		switch {
		case m.series.Readings < 2:
			verdict = fmt.Sprintf("only %d reading(s): too few to show anything", m.series.Readings)
		case !flat:
			verdict = fmt.Sprintf("values %s, floor %d: %s moved under %s's demand", joinInts(m.series.Values), m.floor, m.t.Name, driven)
		}
		rep.Judge(crossPhase, fmt.Sprintf("%sdemand on %s leaves %s at its floor", tag, driven, m.t.Name), flat,
			fmt.Sprintf("%s spec.replicas over %s: %s: %s", m.t.Name, window.Round(time.Millisecond), describeSeries(m.series), verdict))
	}
	crossCleanup(ctx, rep, d, tag)
	return round
}

// crossCleanup deletes the round's claims by exact name.
func crossCleanup(ctx context.Context, rep *report.Report, d *Runner, tag string) {
	deleted, err := d.rest.deleteAllClaims(ctx)
	name := fmt.Sprintf("%sthe claims on %s are deleted", tag, d.cfg.Pool)
	if err != nil {
		rep.Fail(crossPhase, name, fmt.Sprintf("deleted %v, then: %v", deleted, err))
		return
	}
	rep.Pass(crossPhase, name, fmt.Sprintf("deleted by exact name in %s: %v", d.cfg.Namespace, deleted))
}

// watchPools reads every pool's spec.replicas each poll interval until the window ends (the
// last reading at its end). A failed read fails the window: a reading that could not be taken
// proves nothing about the pools at that moment.
func watchPools(ctx context.Context, cfg Config, rep *report.Report, members []*crossMember, from time.Time, window time.Duration) error {
	first := true
	w := poll.Wait{Timeout: time.Until(from.Add(window)), Interval: cfg.Poll, Every: progressEvery,
		Progress: func(poll.Status) {
			if first { // the window's first reading is no news
				first = false
				return
			}
			var now []string
			for _, m := range members {
				now = append(now, fmt.Sprintf("%s %s", m.t.Name, joinInts(m.series.Values)))
			}
			rep.Printf("  %s into the window: %s", time.Since(from).Round(time.Second), strings.Join(now, ", "))
		}}
	_, err := w.Consistently(ctx, func(ctx context.Context) (bool, error) {
		for _, m := range members {
			p, err := m.r.readPoolNow(ctx)
			if err != nil {
				return false, fmt.Errorf("%s: %w", m.t.Name, err)
			}
			s := &m.series
			s.Readings++
			s.Series = append(s.Series, report.SeriesPoint{AtSeconds: time.Since(from).Seconds(), SpecReplicas: p.Spec})
			if len(s.Values) == 0 || s.Values[len(s.Values)-1] != p.Spec {
				s.Values = append(s.Values, p.Spec)
			}
		}
		return true, nil // judged after the window, on the whole series
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("at +%s: %w", secs(time.Since(from).Seconds()), errors.Unwrap(err))
	}
	return err
}

// describeSeries prints the readings as runs of one value: "1 at +0.0s..+58.1s (30 readings)".
func describeSeries(s report.PoolSeries) string {
	if len(s.Series) == 0 {
		return "no reading"
	}
	var runs []string
	start, count := 0, 0
	flush := func(end int) {
		a, b := s.Series[start], s.Series[end]
		runs = append(runs, fmt.Sprintf("%d at +%s..+%s (%d)", a.SpecReplicas, secs(a.AtSeconds), secs(b.AtSeconds), count))
	}
	for i, p := range s.Series {
		if i > 0 && p.SpecReplicas != s.Series[start].SpecReplicas {
			flush(i - 1)
			start, count = i, 0
		}
		count++
	}
	flush(len(s.Series) - 1)
	return fmt.Sprintf("%d readings: %s", s.Readings, strings.Join(runs, ", then "))
}

// settleAtFloor waits for the pool to hold no claims and to read its floor, and returns
// spec.replicas and what it read. It records no check: the caller does.
func (r *Runner) settleAtFloor(ctx context.Context, floor int64) (int64, string, error) {
	n, err := r.countClaims(ctx)
	if err != nil {
		return 0, "", err
	}
	if n != 0 {
		return 0, "", fmt.Errorf("%d claim(s) in %s match the exporter's selector %q: the pool's size would not be this control's", n, r.cfg.Namespace, r.cfg.ClaimSelector)
	}
	if r.formula != nil {
		o := r.formulaWait(ctx, 0, time.Now(), r.cfg.StepTimeout+r.formulaWindow(), &floor, true, false, true)
		if o.err != nil || o.matched == nil {
			return 0, "", fmt.Errorf("not back at its floor: %v; %s", o.err, lastReadings(o.readings, 3))
		}
		return o.spec, fmt.Sprintf(", the formula's answer on %s", formatInputs(o.matched.Inputs)), nil
	}
	u, _, err := waitObject(ctx, r.rep, r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace), r.cfg.Pool,
		fmt.Sprintf("%s spec.replicas=%d", r.cfg.Pool, floor), r.cfg.StepTimeout+r.downPace.total(), r.cfg.Poll, specIs(floor, nil))
	if err != nil {
		return 0, "", err
	}
	p, err := readPool(u)
	return p.Spec, "", err
}

// exporterNow reads the pool's answer: for the driven pool it waits (the exporter timeout) for
// the count to arrive, for the others the first answer must say want. A failed read is tried
// again (for up to the exporter timeout), never taken as an answer.
func (r *Runner) exporterNow(ctx context.Context, want int64) (int64, string) {
	var last *DemandReading
	what := fmt.Sprintf("the exporter to serve %s active_claims=%d", r.cfg.Pool, want)
	if want == 0 {
		what = fmt.Sprintf("the exporter to answer for %s", r.cfg.Pool)
	}
	_, err := pollUntil(ctx, r.rep, what, r.cfg.ExporterTimeout, r.cfg.Poll, func(ctx context.Context) (bool, string, error) {
		d, err := r.demand.Read(ctx)
		if err != nil {
			return false, "", err
		}
		last = &d
		return want == 0 || d.ActiveClaims == want, fmt.Sprintf("active_claims=%d", d.ActiveClaims), nil
	})
	switch {
	case last == nil:
		return -1, fmt.Sprintf("unreadable: %v", err)
	case err != nil:
		return last.ActiveClaims, fmt.Sprintf("%s (%v)", last, err)
	}
	return last.ActiveClaims, last.String()
}
