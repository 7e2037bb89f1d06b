package verifier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// hpaName is the HPA KEDA creates for a ScaledObject.
func hpaName(so string) string { return contract.KedaHPAPrefix + so }

// controlWindow is max(floor, k x the measured scale-up time): long enough
// that KEDA would have moved the pool several times over if it were there.
func (r *Runner) controlWindow() (time.Duration, string) {
	return windowFrom(r.cfg, r.upDecision, "measured slowest scale-up decision")
}

// windowFrom is max(control-floor, k x measured), with --scale-up-time when nothing was measured.
func windowFrom(cfg Config, measured time.Duration, src string) (time.Duration, string) {
	if measured == 0 {
		measured, src = cfg.ScaleUpTime, "--scale-up-time"
	}
	k := time.Duration(cfg.ControlK * float64(measured))
	w := max(cfg.ControlFloor, k)
	return w, fmt.Sprintf("max(floor %s, %g x %s %s = %s) = %s", cfg.ControlFloor, cfg.ControlK, src, measured.Round(time.Millisecond), k.Round(time.Millisecond), w.Round(time.Millisecond))
}

// control: remove the ScaledObject, show its HPA gone, apply the same demand,
// show the exporter serves it, and watch spec.replicas stay flat; then put
// everything back and read it back. The exit handler repeats the restore on
// any other exit path.
func (r *Runner) control(ctx context.Context) error {
	const ph = "control"
	r.rep.Printf("-- 1/4 settle at the floor, then remove the ScaledObject --")
	base, err := r.baseline(ctx, ph)
	if err != nil {
		return err
	}
	sos := r.dyn.Resource(gvr.ScaledObject).Namespace(r.cfg.Namespace)
	live, err := sos.Get(ctx, r.cfg.ScaledObject, metav1.GetOptions{})
	if err != nil {
		r.rep.Fail(ph, "the ScaledObject and its HPA are gone", fmt.Sprintf("reading scaledobject/%s before removing it: %v", r.cfg.ScaledObject, err))
		return errStop
	}
	oldUID := live.GetUID()
	// Armed before the delete, so every later exit path restores it.
	r.rest.armScaledObject(live)
	if err := sos.Delete(ctx, r.cfg.ScaledObject, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		r.rep.Fail(ph, "the ScaledObject and its HPA are gone", fmt.Sprintf("deleting scaledobject/%s: %v", r.cfg.ScaledObject, err))
		return errStop
	}
	r.rep.Printf("scaledobject/%s (uid %s) deleted", r.cfg.ScaledObject, oldUID)
	var hpas string
	_, err = pollUntil(ctx, r.rep, fmt.Sprintf("scaledobject/%s and hpa/%s to be gone", r.cfg.ScaledObject, hpaName(r.cfg.ScaledObject)), r.cfg.HPATimeout, r.cfg.Poll,
		func(ctx context.Context) (bool, string, error) {
			_, err := sos.Get(ctx, r.cfg.ScaledObject, metav1.GetOptions{})
			soGone := apierrors.IsNotFound(err)
			if err != nil && !soGone {
				return false, "", fmt.Errorf("reading scaledobject/%s: %w", r.cfg.ScaledObject, err)
			}
			hs, err := r.hpasForPool(ctx)
			if err != nil {
				return false, "", err
			}
			hpas = hpaNames(hs)
			return soGone && len(hs) == 0, fmt.Sprintf("scaledobject present=%t, HPAs targeting %s: %s", !soGone, r.cfg.Pool, hpas), nil
		})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.rep.Fail(ph, "the ScaledObject and its HPA are gone", err.Error())
		return errStop
	}
	r.rep.Printf("HPA whose scaleTargetRef names %s: %s", r.cfg.Pool, hpas)
	r.rep.Pass(ph, "the ScaledObject and its HPA are gone", fmt.Sprintf("scaledobject/%s: not found; no HPA targets %s (%s gone): nothing is autoscaling the pool now", r.cfg.ScaledObject, r.cfg.Pool, hpaName(r.cfg.ScaledObject)))

	r.rep.Printf("-- 2/4 apply the same demand: %d claims --", r.cfg.LoadCap)
	for i := 1; i <= r.cfg.LoadCap; i++ {
		if _, _, err := r.rest.createClaim(ctx, demandClaimName(i), r.cfg.Pool); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.rep.Fail(ph, "the same demand is present", fmt.Sprintf("create sandboxclaim/%s: %v", demandClaimName(i), err))
			return r.controlRestore(ctx, oldUID)
		}
	}
	n, err := r.countClaims(ctx)
	if err != nil {
		r.rep.Fail(ph, "the same demand is present", err.Error())
	} else {
		r.rep.Printf("claims now: %d", n)
		r.rep.Judge(ph, "the same demand is present", n == r.cfg.LoadCap,
			fmt.Sprintf("%d claims match the exporter's selector, created by this run: %v (the demand phase's cap is %d)", n, r.rest.ownedClaims(), r.cfg.LoadCap))
	}
	r.exporterServes(ctx, ph, r.cfg.LoadCap)
	if ctx.Err() != nil {
		return ctx.Err()
	}

	window, how := r.controlWindow()
	r.rep.Printf("-- 3/4 watch spec.replicas for %s: %s --", window.Round(time.Millisecond), how)
	readings, values, err := r.watchFlat(ctx, window)
	r.rep.SetControl(&report.ControlWindow{WindowSeconds: window.Seconds(), Derivation: how, Readings: readings, Baseline: base.Spec, Values: values})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	name := "spec.replicas stays flat without the autoscaler"
	switch {
	case err != nil:
		r.rep.Fail(ph, name, fmt.Sprintf("after %d reading(s): %v", readings, err))
	case len(values) != 1 || values[0] != base.Spec:
		r.rep.Fail(ph, name, fmt.Sprintf("spec.replicas read %d time(s) in %s; values %s, baseline %d: something moved the pool with no ScaledObject", readings, window.Round(time.Millisecond), joinInts(values), base.Spec))
	case readings < 2:
		r.rep.Fail(ph, name, fmt.Sprintf("only %d reading(s) in %s: too few to show anything", readings, window.Round(time.Millisecond)))
	default:
		r.rep.Printf("spec.replicas read %d time(s) during the window, every one of them %d", readings, base.Spec)
		r.rep.Pass(ph, name, fmt.Sprintf("with no autoscaler, spec.replicas stayed %d under the same %d claims for %s (%d readings)", base.Spec, r.cfg.LoadCap, window.Round(time.Millisecond), readings))
	}
	return r.controlRestore(ctx, oldUID)
}

// controlRestore is step 4/4 on the normal path: claims deleted by name, the
// ScaledObject recreated and read back, KEDA's HPA back.
func (r *Runner) controlRestore(ctx context.Context, oldUID any) error {
	const ph = "control"
	r.rep.Printf("-- 4/4 put the stack back: claims deleted, ScaledObject recreated --")
	deleted, err := r.rest.deleteAllClaims(ctx)
	if err != nil {
		r.rep.Fail(ph, "this run's claims are deleted", fmt.Sprintf("deleted %v, then: %v", deleted, err))
	} else {
		r.rep.Pass(ph, "this run's claims are deleted", fmt.Sprintf("deleted by exact name: %v", deleted))
	}
	back, err := r.rest.restoreScaledObject(ctx, r.cfg.RestoreTimeout)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.rep.Fail(ph, "the ScaledObject is back and not terminating", err.Error())
		return errStop
	}
	r.rep.Pass(ph, "the ScaledObject is back and not terminating", fmt.Sprintf("scaledobject/%s read back: uid %s (was %v), no deletionTimestamp", back.GetName(), back.GetUID(), oldUID))

	var got string
	_, err = pollUntil(ctx, r.rep, fmt.Sprintf("KEDA to create hpa/%s again", hpaName(r.cfg.ScaledObject)), r.cfg.HPATimeout, r.cfg.Poll,
		func(ctx context.Context) (bool, string, error) {
			hs, err := r.hpasForPool(ctx)
			if err != nil {
				return false, "", err
			}
			got = hpaNames(hs)
			for i := range hs {
				if owned, _ := ownedByScaledObject(&hs[i], r.cfg.ScaledObject); owned && hs[i].Spec.ScaleTargetRef.Kind == contract.SandboxWarmPoolKind {
					return true, got, nil
				}
			}
			return false, got, nil
		})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.rep.Fail(ph, "KEDA created its HPA again", err.Error())
		return errStop
	}
	r.rep.Printf("HPA whose scaleTargetRef names %s: %s", r.cfg.Pool, got)
	r.rep.Pass(ph, "KEDA created its HPA again", fmt.Sprintf("hpa %s targets SandboxWarmPool/%s and is owned by scaledobject/%s: the pool is back under autoscaling", got, r.cfg.Pool, r.cfg.ScaledObject))
	return nil
}

// watchFlat reads spec.replicas for the whole window, from watch events and
// from a poll every interval (the last at the window's end), and returns how many readings it
// took and the distinct values in order. A failed read (or an object that does not read as a
// pool) ends it with an error: a reading that could not be taken proves nothing about the pool
// at that moment.
func (r *Runner) watchFlat(ctx context.Context, window time.Duration) (int, []int64, error) {
	ri := r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex // the watch's events are recorded as they arrive, beside the polls
	readings := 0
	var values []int64
	var broken error // an event that did not read as a pool
	record := func(u *unstructured.Unstructured) error {
		p, err := readPool(u)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			return err
		}
		readings++
		if len(values) == 0 || values[len(values)-1] != p.Spec {
			values = append(values, p.Spec)
		}
		return nil
	}
	if w, err := watchName(wctx, ri, r.cfg.Pool); err == nil {
		defer w.Stop()
		go func() {
			for ev := range w.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == r.cfg.Pool &&
					(ev.Type == watch.Added || ev.Type == watch.Modified) {
					if err := record(u); err != nil {
						mu.Lock()
						broken = err
						mu.Unlock()
						return
					}
				}
			}
		}()
	} else {
		r.rep.Printf("  (watch unavailable: %v; polling every %s)", err, r.cfg.Poll)
	}
	snapshot := func() (int, []int64, error) {
		mu.Lock()
		defer mu.Unlock()
		return readings, append([]int64(nil), values...), broken
	}
	first := true
	start := time.Now()
	_, err := poll.Wait{Timeout: window, Interval: r.cfg.Poll, Every: progressEvery,
		Progress: func(poll.Status) {
			if first { // the window's first reading is no news
				first = false
				return
			}
			n, v, _ := snapshot()
			r.rep.Printf("  %d reading(s) so far, values %s", n, joinInts(v))
		}}.Consistently(ctx, func(ctx context.Context) (bool, error) {
		if _, _, err := snapshot(); err != nil {
			return false, err
		}
		u, err := ri.Get(ctx, r.cfg.Pool, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading sandboxwarmpool/%s: %w", r.cfg.Pool, err)
		}
		return true, record(u) // judged after the window, on every value read
	})
	cancel()
	n, v, late := snapshot()
	switch {
	case ctx.Err() != nil:
		return n, v, ctx.Err()
	case err == nil && late != nil:
		return n, v, late
	case err != nil:
		// Consistently numbers its polls; the evidence counts every reading, so it says when.
		return n, v, fmt.Errorf("a read %s into the window failed: %w", time.Since(start).Round(time.Millisecond), errors.Unwrap(err))
	}
	return n, v, nil
}
