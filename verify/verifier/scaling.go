package verifier

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// awaitStep waits for the pool's decision for n claims, timed from the moment
// the demand changed, records the step and the check. It asserts
// spec.replicas only; readyReplicas is printed beside it.
func (r *Runner) awaitStep(ctx context.Context, dir string, n int, changedAt time.Time) {
	if r.formula != nil {
		r.awaitFormulaStep(ctx, dir, n, changedAt)
		return
	}
	want := r.expected(n)
	prev := r.lastExpected
	timeout := r.cfg.StepTimeout
	if dir == "down" {
		// The HPA holds the highest recommendation of its stabilization window.
		timeout += r.downPace.total()
	}
	var seen []int64
	u, at, err := waitObject(ctx, r.rep, r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace), r.cfg.Pool,
		fmt.Sprintf("spec.replicas=%d", want), timeout, r.cfg.Poll, specIs(want, &seen))
	step := report.Step{Claims: n, Expected: want}
	if u != nil {
		if p, perr := readPool(u); perr == nil {
			step.SpecReplicas, step.ReadyReplicas = i64(p.Spec), p.Ready
		}
	}
	step.Seen = seen
	name := fmt.Sprintf("scale %s: %d claim(s) -> spec.replicas=%d", dir, n, want)
	rule := fmt.Sprintf("ceil(%d/%g)=%d within [%d,%d]", n, r.target, r.ceil(n), r.min, r.max)
	if r.headroom > 0 {
		rule = fmt.Sprintf("ceil(%d/%g)+%d=%d within [%d,%d]", n, r.target, r.headroom, r.ceil(n)+r.headroom, r.min, r.max)
	}
	if err != nil {
		r.addStep(dir, step)
		if ctx.Err() != nil {
			return
		}
		r.rep.Fail("scaling", name, fmt.Sprintf("expected %d (%s): %v; values seen %s; %s", want, rule, err, joinInts(seen), r.readPath(ctx, true)))
		return
	}
	lat := at.Sub(changedAt)
	step.LatencySeconds = f64(lat.Seconds())
	r.addStep(dir, step)
	p, _ := readPool(u)
	r.rep.Printf("[reading] %d claim(s) spec.replicas=%d status.readyReplicas=%s (%s after the demand changed)", n, p.Spec, p.readyString(), secs(lat.Seconds()))
	how := fmt.Sprintf("%s after the demand changed", secs(lat.Seconds()))
	if want == prev {
		how = "unchanged from the previous level, as expected (no decision to time)"
	} else if dir == "up" && lat > r.upDecision {
		r.upDecision = lat
	}
	r.lastExpected = want
	r.rep.Pass("scaling", name, fmt.Sprintf("spec.replicas=%d (%s), %s; values seen %s; status.readyReplicas=%s (printed, not asserted)",
		p.Spec, rule, how, joinInts(seen), p.readyString()))
}

// ceil is ceil(n / target) as the HPA computes it: on quantities in thousandths (KEDA writes a
// formula's value with three decimals), so 21 claims at target 0.7 are 30 warm sandboxes, not the
// 31 that float division's 30.000000000000004 would round up to.
func (r *Runner) ceil(n int) int64 {
	return int64(math.Ceil(math.Round(float64(n)/r.target*1000) / 1000))
}

func (r *Runner) addStep(dir string, s report.Step) { r.rep.AddStep(dir, s) }

func joinInts(v []int64) string {
	if len(v) == 0 {
		return "<none>"
	}
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, " -> ")
}

// scaleUp adds one claim at a time up to the cap and asserts each decision.
// demand-1 is the adoption's claim, so this continues from what is held.
func (r *Runner) scaleUp(ctx context.Context) error {
	held := len(r.rest.ownedClaims())
	for i := held + 1; i <= r.cfg.LoadCap; i++ {
		name := demandClaimName(i)
		_, at, err := r.rest.createClaim(ctx, name, r.cfg.Pool)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			why := err.Error()
			if apierrors.IsAlreadyExists(err) {
				why = "AlreadyExists: a claim of that name that this run did not create is there; it is not reused"
			}
			r.rep.Fail("scaling", "scale up: create "+name, why)
			return errStop
		}
		r.rep.Printf("claims now: %d (created sandboxclaim/%s)", i, name)
		r.awaitStep(ctx, "up", i, at)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	n, err := r.countClaims(ctx)
	if err != nil {
		r.rep.Fail("scaling", "the demand is at the cap", err.Error())
	} else {
		r.rep.Judge("scaling", "the demand is at the cap", n == r.cfg.LoadCap,
			fmt.Sprintf("%d claims match the exporter's selector (cap %d)", n, r.cfg.LoadCap))
	}
	r.exporterServes(ctx, "scaling", r.cfg.LoadCap)
	return ctx.Err()
}

// scaleDown removes this run's claims by exact name, one at a time (or all at
// once with --down-stepwise=false), asserting each decision down to the floor.
func (r *Runner) scaleDown(ctx context.Context) error {
	held := r.rest.ownedClaims()
	if r.cfg.DownEach {
		for i := len(held) - 1; i >= 0; i-- {
			at, err := r.rest.deleteClaim(ctx, held[i])
			if err != nil {
				r.rep.Fail("scaling", "scale down: delete "+held[i], err.Error())
				return errStop
			}
			r.rep.Printf("claims now: %d (deleted sandboxclaim/%s)", i, held[i])
			r.awaitStep(ctx, "down", i, at)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	} else {
		var at time.Time
		for _, n := range held {
			t, err := r.rest.deleteClaim(ctx, n)
			if err != nil {
				r.rep.Fail("scaling", "scale down: delete "+n, err.Error())
				return errStop
			}
			at = t
		}
		r.rep.Printf("claims now: 0 (deleted %v)", held)
		r.awaitStep(ctx, "down", 0, at)
	}
	r.exporterServes(ctx, "scaling", 0)
	var up, down []string
	for _, s := range r.rep.Steps("up") {
		up = append(up, fmt.Sprintf("%d:%s", s.Claims, ptrStr(s.SpecReplicas)))
	}
	for _, s := range r.rep.Steps("down") {
		down = append(down, fmt.Sprintf("%d:%s", s.Claims, ptrStr(s.SpecReplicas)))
	}
	r.rep.Printf("claims:spec.replicas up %s; down %s", strings.Join(up, " "), strings.Join(down, " "))
	return ctx.Err()
}

func ptrStr(p *int64) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}
