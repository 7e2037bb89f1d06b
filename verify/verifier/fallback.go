package verifier

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// judgeFallbackUsable judges whether KEDA would use the ScaledObject's fallback, by the rule KEDA
// v2.21 applies before it (pkg/fallback HasValidFallback): a failureThreshold and replicas of at
// least 0, and with scalingModifiers a target that parses as a positive integer. A fallback KEDA
// ignores is silent: an exporter outage reaches the HPA as an error, nothing holds warm capacity,
// and KEDA's Fallback condition is never written.
func (r *Runner) judgeFallbackUsable(ph string, so *unstructured.Unstructured) {
	const name = "KEDA would use the ScaledObject's fallback"
	ok, ev := fallbackUsable(so)
	r.rep.Judge(ph, name, ok, ev)
}

// fallbackUsable is KEDA's rule on a ScaledObject as verify reads it.
func fallbackUsable(so *unstructured.Unstructured) (bool, string) {
	fb, found, err := unstructured.NestedMap(so.Object, "spec", "fallback")
	if err != nil || !found {
		return false, "spec.fallback is absent: an exporter outage would reach the HPA as an error and nothing would hold the pool's size (the program always writes one: run pulumi up)"
	}
	threshold, _, terr := unstructured.NestedInt64(fb, "failureThreshold")
	replicas, _, rerr := unstructured.NestedInt64(fb, "replicas")
	if terr != nil || rerr != nil || threshold < 0 || replicas < 0 {
		return false, fmt.Sprintf("spec.fallback %v: KEDA ignores a fallback whose failureThreshold or replicas is not a whole number of at least 0", fb)
	}
	ev := fmt.Sprintf("fallback failureThreshold=%d replicas=%d", threshold, replicas)
	formula, _, _ := unstructured.NestedString(so.Object, "spec", "advanced", "scalingModifiers", "formula")
	if formula == "" {
		return true, ev + ", no scalingModifiers formula"
	}
	target, _, _ := unstructured.NestedString(so.Object, "spec", "advanced", "scalingModifiers", "target")
	if v, err := strconv.ParseInt(target, 10, 64); err != nil || v <= 0 {
		return false, fmt.Sprintf("%s, but scalingModifiers.target is %q: KEDA v2.21 uses the fallback of a ScaledObject with a formula only when that target is a positive integer (pkg/fallback HasValidFallback), so an exporter outage would freeze nothing and alert nothing; the program writes target 1 and divides in the formula (run pulumi up)", ev, target)
	}
	return true, fmt.Sprintf("%s, scalingModifiers.target %q (a positive integer, as KEDA requires beside a formula)", ev, target)
}

// checkFallback judges whether KEDA is reading the exporter, from the ScaledObject's own status:
// its Fallback condition and the health KEDA keeps per trigger. A pool on its fallback is frozen
// at its size (currentReplicasIfHigher) whatever demand does: right for a blip, wrong for a
// broken read path, and nothing else a user looks at says so. KEDA writes both only once it
// has read the triggers with a fallback configured; before that there is nothing to judge. A
// failing reading is read again for up to --exporter-timeout: a blip (an exporter that has just
// started) clears at KEDA's next read, a broken read path does not. A read of the ScaledObject
// that fails is tried again too, and reported; the reading before it stands.
func (r *Runner) checkFallback(ctx context.Context, phase string, so *unstructured.Unstructured) {
	const name = "KEDA reads the exporter: no fallback active, no trigger failing"
	start := time.Now()
	verdict, ev := report.NA, ""
	reads := 0
	err := poll.Until(ctx, r.cfg.ExporterTimeout, r.cfg.Poll, func(ctx context.Context) (bool, error) {
		if reads++; reads > 1 { // the first reading is the one the caller took
			again, err := r.dyn.Resource(gvr.ScaledObject).Namespace(r.cfg.Namespace).Get(ctx, so.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("reading scaledobject/%s: %w", so.GetName(), err)
			}
			so = again
		}
		var bad bool
		bad, verdict, ev = fallbackReading(so)
		if verdict == report.Pass {
			// KEDA's status lags an outage: hold it to what verify reads itself. A part found
			// broken is read again like KEDA's own status (an exporter that has just restarted).
			p := r.readPath(ctx, false)
			if !p.ok() {
				verdict, ev = report.Fail, ev+"; but "+p.String()+"; KEDA's status lags an outage by its failure threshold, so it has not said so yet"
				return false, nil
			}
			ev += "; " + p.String()
		}
		return !bad, nil
	})
	var nr *poll.NotReached
	switch {
	case err != nil && ctx.Err() != nil:
		r.rep.Fail(phase, name, ev+"; "+ctx.Err().Error())
		return
	case errors.As(err, &nr):
		ev += fmt.Sprintf(" (still so after %s of reading again", time.Since(start).Round(time.Second))
		if nr.LastErr != nil {
			ev += fmt.Sprintf("; %d of %d reads failed, the last read error: %v", nr.Failed, nr.Reads, nr.LastErr)
		}
		ev += ")"
	}
	switch verdict {
	case report.Pass:
		r.rep.Pass(phase, name, ev)
	case report.NA:
		r.rep.NA(phase, name, ev)
	default:
		r.rep.Fail(phase, name, ev)
	}
}

// fallbackReading judges one reading of the ScaledObject's status: bad when KEDA is on its
// fallback or a trigger is failing; good when KEDA says no fallback is active or every trigger
// it has read is Happy; N/A when KEDA has written neither.
func fallbackReading(so *unstructured.Unstructured) (bad bool, verdict report.Status, evidence string) {
	var fallback, fallbackEv string
	conds, _, _ := unstructured.NestedSlice(so.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Fallback" {
			fallback = fmt.Sprint(m["status"])
			fallbackEv = fmt.Sprintf("Fallback=%s (%v: %v)", m["status"], m["reason"], m["message"])
		}
	}
	health, _, _ := unstructured.NestedMap(so.Object, "status", "health")
	var failing, healthEv []string
	happy := 0
	for metric, h := range health {
		m, _ := h.(map[string]any)
		healthEv = append(healthEv, fmt.Sprintf("%s %v after %v failures", metric, m["status"], m["numberOfFailures"]))
		switch m["status"] {
		case "Failing":
			failing = append(failing, metric)
		case "Happy":
			happy++
		}
	}
	sort.Strings(healthEv)
	sort.Strings(failing)
	if fallbackEv == "" {
		fallbackEv = "no Fallback condition"
	}
	ev := fmt.Sprintf("scaledobject/%s: %s; health: %s", so.GetName(), fallbackEv, orNone(healthEv))
	switch {
	case fallback == "True" || len(failing) > 0:
		return true, report.Fail, ev + fmt.Sprintf("; KEDA cannot read %s, so the pool is held at its size whatever demand does: check that the exporter's Service answers and KEDA resolves its name (the README's Reliability and alerting says what to watch)", orNone(failing))
	case fallback == "False" || (happy > 0 && happy == len(health)):
		// KEDA resets the condition to Unknown when it reconciles the ScaledObject again; a
		// Happy health entry for every trigger is its own record of a successful read.
		return false, report.Pass, ev
	default:
		return false, report.NA, ev + "; KEDA has not judged its triggers yet, so there is no reading to hold"
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return strings.Join(s, ", ")
}
