package verifier

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// adoption: one claim, created (never applied), adopts a pre-booted warm
// sandbox, and reports Ready within the bound, timed from the client side.
func (r *Runner) adoption(ctx context.Context) error {
	const ph = "adoption"
	name := demandClaimName(1)
	claims := r.dyn.Resource(gvr.SandboxClaim).Namespace(r.cfg.Namespace)
	zeroFloor := r.min == 0
	if err := r.awaitWarmSandbox(ctx, zeroFloor); err != nil {
		return err
	}

	// The watch starts before the create so the Ready event cannot be missed.
	w, werr := watchName(ctx, claims, name)
	if werr != nil {
		r.rep.Printf("  (watch on claims unavailable: %v; polling every %s, so the timing is coarser)", werr, r.cfg.Poll)
	}
	began := time.Now()
	created, createdAt, err := r.rest.createClaim(ctx, name, r.cfg.Pool)
	if err != nil {
		if w != nil {
			w.Stop()
		}
		if apierrors.IsAlreadyExists(err) {
			r.rep.Fail(ph, "the claim was created by this run", fmt.Sprintf("create sandboxclaim/%s returned AlreadyExists: a claim of that name that this run did not create is there; it is not reused and not deleted", name))
		} else {
			r.rep.Fail(ph, "the claim was created by this run", fmt.Sprintf("create sandboxclaim/%s: %v", name, err))
		}
		return errStop
	}
	r.rep.Pass(ph, "the claim was created by this run", fmt.Sprintf("sandboxclaim/%s created (uid %s) with create, so an existing claim of that name would have failed here", name, created.GetUID()))

	ready, readyAt, err := waitWatched(ctx, r.rep, claims, w, name, "sandboxclaim/"+name+" Ready=True", r.cfg.AdoptionTimeout, r.cfg.Poll,
		func(u *unstructured.Unstructured) (bool, string, error) {
			if claimReady(u) {
				return true, "Ready", nil
			}
			return false, "not Ready", nil
		})
	if err != nil {
		r.rep.Fail(ph, "the claim reported Ready within the bound", err.Error())
		return errStop
	}
	lat := readyAt.Sub(createdAt)
	r.rep.SetAdoptionLatency(lat.Seconds())
	r.rep.Printf("claim %s Ready %s after its create returned (create and wait together: %s)", name, secs(lat.Seconds()), secs(readyAt.Sub(began).Seconds()))
	r.judgeAdopted(ctx, ph, name, created, ready, lat, zeroFloor)

	// The 0 -> 1 claim step of the scale-up, timed from this create.
	r.awaitStep(ctx, "up", 1, createdAt)
	return ctx.Err()
}

// awaitWarmSandbox waits for a warm sandbox to adopt. This is a gate, not a
// check: readyReplicas is never asserted, and a claim made without one shows
// up in the adoption checks as a cold launch or a slow Ready. At a zero floor
// there is none to wait for.
func (r *Runner) awaitWarmSandbox(ctx context.Context, zeroFloor bool) error {
	if zeroFloor {
		r.rep.Printf("minReplicaCount is 0: no warm sandbox to wait for; the claim wakes the pool")
		return nil
	}
	_, _, err := waitObject(ctx, r.rep, r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace), r.cfg.Pool,
		"a warm sandbox to adopt (status.readyReplicas>=1)", r.cfg.AdoptionTimeout, r.cfg.Poll,
		func(u *unstructured.Unstructured) (bool, string, error) {
			p, err := readPool(u)
			if err != nil {
				return false, "", err
			}
			return p.Ready != nil && *p.Ready >= 1, "status.readyReplicas=" + p.readyString(), nil
		})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.rep.Printf("no warm sandbox seen (%v); creating the claim anyway", err)
	}
	return nil
}

// judgeAdopted judges the Ready claim: its sandbox was adopted warm, its pod
// is older than the claim, and it was Ready within the bound.
func (r *Runner) judgeAdopted(ctx context.Context, ph, name string, created, ready *unstructured.Unstructured, lat time.Duration, zeroFloor bool) {
	sbName := claimSandboxName(ready)
	sb, err := r.dyn.Resource(gvr.Sandbox).Namespace(r.cfg.Namespace).Get(ctx, sbName, metav1.GetOptions{})
	readyEv := fmt.Sprintf("Ready %s after the create returned (bound %s), timed from the client side, not from the condition's transition time", secs(lat.Seconds()), r.cfg.AdoptionBound)
	if sbName == "" || err != nil {
		r.rep.Fail(ph, "the claim adopted a pre-booted sandbox", fmt.Sprintf("status.sandbox.name=%q: %v", sbName, err))
		r.rep.Judge(ph, "the claim reported Ready within the bound", lat <= r.cfg.AdoptionBound, readyEv)
		return
	}
	lt := sb.GetLabels()[labelLaunchType]
	r.rep.Printf("claim %s -> sandbox/%s %s=%s", name, sbName, labelLaunchType, lt)
	podName := sandboxPodName(sb)
	pod, perr := r.kube.CoreV1().Pods(r.cfg.Namespace).Get(ctx, podName, metav1.GetOptions{})
	if perr == nil {
		r.claimedPod = pod
	}
	if zeroFloor && lt != "warm" {
		// Scale-to-zero trades adoption for an empty pool at rest: a
		// first claim on it is a cold start, so adoption cannot be shown.
		why := fmt.Sprintf("minReplicaCount is 0, so the pool held no warm sandbox when the claim came; sandbox/%s has %s=%q and the claim was %s; adoption is shown only with a floor of at least 1",
			sbName, labelLaunchType, lt, readyEv)
		for _, c := range []string{"the claim adopted a pre-booted sandbox", "the pod predates the claim", "the claim reported Ready within the bound"} {
			r.rep.NA(ph, c, why)
		}
		return
	}
	r.rep.Judge(ph, "the claim adopted a pre-booted sandbox", lt == "warm",
		fmt.Sprintf("sandbox/%s has %s=%q (warm = adopted from the pool, cold = created for the claim)", sbName, labelLaunchType, lt))
	if perr != nil {
		r.rep.Fail(ph, "the pod predates the claim", fmt.Sprintf("reading pod/%s: %v", podName, perr))
	} else {
		pt, ct := pod.CreationTimestamp.Time, created.GetCreationTimestamp().Time
		r.rep.Printf("pod %s created %s; claim created %s", podName, pt.UTC().Format(time.RFC3339), ct.UTC().Format(time.RFC3339))
		if !pt.IsZero() && !ct.IsZero() && pt.Before(ct) {
			r.rep.Pass(ph, "the pod predates the claim", fmt.Sprintf("pod/%s was created %s before the claim existed, so it was adopted, not created for the claim", podName, ct.Sub(pt).Round(time.Second)))
		} else {
			r.rep.Fail(ph, "the pod predates the claim", fmt.Sprintf("pod/%s created %s, claim created %s: the pod is not older than the claim, so it may have been created for it", podName, pt.UTC().Format(time.RFC3339), ct.UTC().Format(time.RFC3339)))
		}
	}
	r.rep.Judge(ph, "the claim reported Ready within the bound", lat <= r.cfg.AdoptionBound, readyEv)
}
