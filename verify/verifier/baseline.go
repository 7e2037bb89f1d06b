package verifier

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// baseline: none of the names verify creates is taken, no claim is counted,
// and the pool holds the floor. The control runs the same checks first.
func (r *Runner) baseline(ctx context.Context, ph string) (poolReading, error) {
	var leftover []string
	for i := 1; i <= r.cfg.LoadCap; i++ {
		n := demandClaimName(i)
		_, err := r.dyn.Resource(gvr.SandboxClaim).Namespace(r.cfg.Namespace).Get(ctx, n, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			r.rep.Fail(ph, "no demand claim is left over", fmt.Sprintf("reading sandboxclaim/%s: %v", n, err))
			return poolReading{}, errStop
		default:
			leftover = append(leftover, n)
		}
	}
	if len(leftover) > 0 {
		r.rep.Fail(ph, "no demand claim is left over", fmt.Sprintf("sandboxclaim %s already exist(s); this run did not create them, so it leaves them alone and stops (delete them by name, then run again)", strings.Join(leftover, ", ")))
		return poolReading{}, errStop
	}
	r.rep.Pass(ph, "no demand claim is left over", fmt.Sprintf("none of demand-1..demand-%d exists, so the claims read later are this run's", r.cfg.LoadCap))

	n, err := r.countClaims(ctx)
	if err != nil {
		r.rep.Fail(ph, "no demand at the start", err.Error())
		return poolReading{}, errStop
	}
	sel := r.cfg.ClaimSelector
	if sel == "" {
		sel = "<all claims in the namespace>"
	}
	if n != 0 {
		r.rep.Fail(ph, "no demand at the start", fmt.Sprintf("%d claims match the exporter's selector %s: the pool's size would not be this run's demand", n, sel))
		return poolReading{}, errStop
	}
	r.rep.Pass(ph, "no demand at the start", fmt.Sprintf("0 claims match the exporter's selector %s", sel))

	if r.formula != nil {
		p, took, err := r.formulaFloor(ctx, ph)
		if err != nil {
			return p, err
		}
		if ph == "baseline" {
			r.addStep("up", report.Step{Claims: 0, Expected: p.Spec, SpecReplicas: i64(p.Spec), ReadyReplicas: p.Ready,
				LatencySeconds: f64(took.Seconds()), Seen: []int64{p.Spec},
				Note: "baseline: no demand change; latency is the time to read the floor (arrivals aged out of the exporter's windows) after verify started looking"})
		}
		r.rep.Printf("[reading] %s spec.replicas=%d status.readyReplicas=%s claims=0", ph, p.Spec, p.readyString())
		r.lastExpected = p.Spec
		return p, nil
	}

	want := r.expected(0)
	var seen []int64
	began := time.Now()
	u, at, err := waitObject(ctx, r.rep, r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace), r.cfg.Pool,
		fmt.Sprintf("spec.replicas=%d", want), r.cfg.StepTimeout, r.cfg.Poll, specIs(want, &seen))
	if err != nil {
		r.rep.Fail(ph, "the pool holds the floor", err.Error())
		return poolReading{}, errStop
	}
	p, _ := readPool(u)
	if ph == "baseline" {
		// The 0-claim level of the up trajectory. No demand changed here, so
		// its latency is how long the pool took to show the floor once
		// verify looked (0 when it already did), not a decision time.
		r.addStep("up", report.Step{Claims: 0, Expected: want, SpecReplicas: i64(p.Spec), ReadyReplicas: p.Ready,
			LatencySeconds: f64(at.Sub(began).Seconds()), Seen: seen,
			Note: "baseline: no demand change; latency is the time to read the floor after verify started looking"})
	}
	r.rep.Printf("[reading] %s spec.replicas=%d status.readyReplicas=%s claims=0", ph, p.Spec, p.readyString())
	r.rep.Pass(ph, "the pool holds the floor", fmt.Sprintf("0 claims and spec.replicas=%d, the floor (minReplicaCount=%d)", p.Spec, r.min))
	r.lastExpected = want
	return p, nil
}

// specIs is the condition "spec.replicas == want"; seen (optional) records
// every distinct value read on the way, for the evidence.
func specIs(want int64, seen *[]int64) objCond {
	return func(u *unstructured.Unstructured) (bool, string, error) {
		p, err := readPool(u)
		if err != nil {
			return false, "", err
		}
		if seen != nil && (len(*seen) == 0 || (*seen)[len(*seen)-1] != p.Spec) {
			*seen = append(*seen, p.Spec)
		}
		return p.Spec == want, fmt.Sprint(p.Spec), nil
	}
}
