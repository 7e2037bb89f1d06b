package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// The stack: a floor of burstFloor and a ceiling of burstReplicas, targetValue 1.5 and a
// headroom of 1, so KEDA evaluates the program's formula "claims / 1.5 + 1" at target 1 (a
// fractional target beside a formula is what used to switch KEDA's fallback off). The burst:
// burstClaims claims at once, ceil(43 / 1.5) + 1 = 30 warm sandboxes, from the floor of 5: more
// than Kubernetes' default scale-up policy (the larger of 4 pods or 100 % per 15 s) allows in a
// sync.
const (
	burstFloor     = 5
	burstReplicas  = 30
	burstTarget    = "1.5"
	burstHeadroom  = 1
	burstClaims    = 43
	fallbackTarget = burstTarget // the reject's scalingModifiers target, as the program once wrote it
	// burstSteps is how many times the burst is driven with the program's policy: the latency's
	// p95 over them is what docs/measurements.md reports.
	burstSteps = 5
)

// TestLiveSimulatedNodeScalingRules holds the ScaledObject the program writes to what the real
// KEDA and HPA do with it, on a control plane of its own:
//   - a burst of claims reaches the formula's answer in one HPA write, each of burstSteps times,
//     read from the pool's watch; the reject: the same ScaledObject with its scale-up policies
//     removed, so the API server gives the HPA Kubernetes' defaults, takes the same burst through
//     at least two writes (5 -> 10 -> 20 -> 30);
//   - the exporter stopped: KEDA's Fallback condition turns True (KEDA v2.21 uses the fallback,
//     by its own rule, on the program's formula at target 1); the reject: the formula and target
//     as the program wrote them before ("claims + 1.5" at target 1.5), the same outage, and the
//     Fallback condition stays False for three times as long as it took to turn True.
//
// Writes, not seconds, are the burst's verdict: the HPA writes at most once per sync, so one
// write after the last claim is "within one sync" on a machine of any speed. A sync that falls
// while the claims are being created sees part of them; a write before the last create is not
// counted.
func TestLiveSimulatedNodeScalingRules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	work := t.TempDir()
	c := startCluster(t, ctx, work, localcluster.Options{HPASyncPeriod: hpaSyncPeriod(t)}, "")
	e := newLocalExporterEnv(t, ctx, c, work, "e2e", map[string]string{
		"minReplicas": fmt.Sprint(burstFloor), "maxReplicas": fmt.Sprint(burstReplicas), "loadCap": fmt.Sprint(burstReplicas),
		"targetValue": burstTarget, "headroom": fmt.Sprint(burstHeadroom),
	})
	e.upStack(ctx, t)
	e.startExporterWithToken(ctx, t)
	e.waitSpecReplicas(ctx, t, burstFloor, 2*time.Minute)
	// The floor is minReplicas' doing alone: before a burst is timed, the HPA must be reading the
	// exporter's count through KEDA, or the first burst measures the loop's start, not a sync.
	e.waitHPAReadsMetric(ctx, t)
	pools := e.cluster.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(e.ns)
	replicas := framework.WatchObjects(ctx, pools, "metadata.name="+e.pool, framework.SpecReplicasOf)

	t.Run("the program's scale-up: each burst reaches the formula's answer in one HPA write", func(t *testing.T) {
		policies := e.waitScaleUpPolicies(ctx, t, func(p []autoscalingv2.HPAScalingPolicy) bool {
			return len(p) == 1 && p[0].Type == autoscalingv2.PodsScalingPolicy && p[0].Value == burstReplicas
		})
		t.Logf("the HPA's scale-up: %s", policies)
		var latencies []time.Duration
		for i, straddles := 0, 0; i < burstSteps; i++ {
			b := e.burst(ctx, t, replicas, fmt.Sprintf("burst-%d-%d", i, straddles))
			if b.straddled && straddles < burstSteps {
				// The claims took long enough to create that a sync fell among them: not a step.
				t.Logf("burst %d straddled an HPA sync (%s): run again", i, b.values)
				straddles++
				i--
				continue
			}
			if b.writes != 1 {
				t.Errorf("burst %d: spec.replicas took %d writes from the first claim to reach %d (%s), want 1", i, b.writes, burstReplicas, b.values)
			}
			latencies = append(latencies, b.latency)
		}
		slices.Sort(latencies)
		t.Logf("the last claim's create to spec.replicas=%d, over %d bursts: %v; p95 %s (HPA sync %s)",
			burstReplicas, burstSteps, latencies, latencies[(len(latencies)*95+99)/100-1], e.cluster.HPASyncPeriod)
	})

	var fallbackAfter time.Duration
	t.Run("the exporter stopped: KEDA uses the fallback of the program's formula", func(t *testing.T) {
		fallbackAfter = e.fallbackWhileStopped(ctx, t, true, 0)
	})

	t.Run("reject: Kubernetes' default scale-up takes the same burst through several writes", func(t *testing.T) {
		patch := `{"spec":{"advanced":{"horizontalPodAutoscalerConfig":{"behavior":{"scaleUp":{"policies":null}}}}}}`
		if _, err := e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns).Patch(ctx, contract.ScaledObjectName, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-scalingrules"}); err != nil {
			t.Fatalf("removing the ScaledObject's scale-up policies: %v", err)
		}
		policies := e.waitScaleUpPolicies(ctx, t, func(p []autoscalingv2.HPAScalingPolicy) bool {
			return len(p) == 2 // the API server's defaults: 4 Pods and 100 Percent per 15 s
		})
		t.Logf("the HPA's scale-up with no policy of the ScaledObject's: %s", policies)
		b := e.burst(ctx, t, replicas, "default-burst")
		if b.writes < 2 {
			t.Errorf("under Kubernetes' default scale-up, spec.replicas reached %d in %d write(s) from the first claim (%s): the test could not tell the policies apart", burstReplicas, b.writes, b.values)
		}
	})

	t.Run("reject: a fractional target beside the formula, and KEDA ignores the fallback", func(t *testing.T) {
		if fallbackAfter == 0 {
			t.Fatal("the accept case did not measure how soon KEDA falls back, so there is no window to hold the reject to")
		}
		so := e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns)
		// KEDA's operator writes the object too (its status, its finalizer), so a read, a change
		// and an update can meet a newer version: read again and redo the change then.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := so.Get(ctx, contract.ScaledObjectName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			// As the program wrote a headroom of 1 at targetValue 1.5 before: claims + 1 x 1.5 at 1.5.
			if err := unstructured.SetNestedField(u.Object, fmt.Sprintf("claims + %s", fallbackTarget), "spec", "advanced", "scalingModifiers", "formula"); err != nil {
				return err
			}
			if err := unstructured.SetNestedField(u.Object, fallbackTarget, "spec", "advanced", "scalingModifiers", "target"); err != nil {
				return err
			}
			triggers, _, _ := unstructured.NestedSlice(u.Object, "spec", "triggers")
			triggers[0].(map[string]any)["metadata"].(map[string]any)["targetValue"] = fallbackTarget
			if err := unstructured.SetNestedSlice(u.Object, triggers, "spec", "triggers"); err != nil {
				return err
			}
			_, err = so.Update(ctx, u, metav1.UpdateOptions{FieldManager: "e2e-scalingrules"})
			return err
		})
		if err != nil {
			t.Fatalf("writing the old formula and target: %v", err)
		}
		e.fallbackWhileStopped(ctx, t, false, 3*fallbackAfter)
	})
}

// fallbackWhileStopped stops the exporter and reads KEDA's Fallback condition on the stack's
// ScaledObject. want true: it must turn True (returns how long that took); want false: it must
// stay False (or unwritten) for the whole window. The exporter is started again either way.
func (e *env) fallbackWhileStopped(ctx context.Context, t *testing.T, want bool, window time.Duration) time.Duration {
	t.Helper()
	so := e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	fallback := framework.PollFallback(wctx, so, contract.ScaledObjectName)
	stopped := time.Now()
	e.stopExporter()
	defer func() {
		e.startExporter(t)
		framework.Eventually(t, ctx, "KEDA's Fallback condition False again once the exporter answers", 3*time.Minute, func(context.Context) (bool, error) {
			seen := fallback.Since(time.Now())
			return len(seen) > 0 && !seen[len(seen)-1].Value, fallback.LastErr()
		})
	}()
	if want {
		var after time.Duration
		framework.Eventually(t, ctx, "KEDA's Fallback condition True while the exporter is down", 3*time.Minute, func(context.Context) (bool, error) {
			for _, s := range fallback.Since(stopped) {
				if s.Value {
					after = s.At.Sub(stopped)
					return true, nil
				}
			}
			return false, fallback.LastErr()
		})
		t.Logf("KEDA's Fallback condition True %s after the exporter stopped (%s)", after.Round(time.Second), fallback.Spans(stopped))
		return after
	}
	framework.Consistently(t, ctx, "KEDA's Fallback condition never True while the exporter is down", window, func(context.Context) (bool, string, error) {
		seen := fallback.Since(stopped)
		on := slices.ContainsFunc(seen, func(s framework.Observed[bool]) bool { return s.Value })
		return !on, "Fallback " + fallback.Spans(stopped), nil
	})
	return 0
}

// burstResult is one burst as the pool's watch showed it.
type burstResult struct {
	writes int // changes of spec.replicas from the first claim's create until it reached burstReplicas
	// straddled: the HPA synced while the claims were still being created and wrote what the part
	// it saw asked for (a value short of burstReplicas before the last create): the burst was not
	// one step, so it says nothing of the policy.
	straddled bool
	latency   time.Duration // the last claim's create to the first reading of burstReplicas
	values    string        // every value seen from the first create, value@+s from the last create
}

// burst creates burstClaims claims at once, waits for spec.replicas to reach burstReplicas, reads
// the watch, then deletes the claims and waits for the floor again.
func (e *env) burst(ctx context.Context, t *testing.T, replicas *framework.ObjectWatch[int64], prefix string) burstResult {
	t.Helper()
	var names []string
	for i := range burstClaims {
		names = append(names, fmt.Sprintf("%s-%d", prefix, i))
	}
	first := time.Now()
	release := e.holdClaims(ctx, t, names...)
	// A burst that fails must not leave its claims behind: they would hold the pool at its
	// ceiling and fail every later step for a reason that is not theirs.
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	last := time.Now()
	err := framework.EventuallyErr(ctx, fmt.Sprintf("spec.replicas=%d", burstReplicas), 3*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := e.specReplicas(ctx)
		return err == nil && n == burstReplicas, err
	})
	r := readBurst(replicas.Since(first), last)
	t.Logf("%s: %d claims created in %s; spec.replicas %s", prefix, burstClaims, last.Sub(first).Round(time.Millisecond), r.values)
	if err != nil {
		t.Fatalf("%s: %v; the exporter's count and KEDA's metric: %s", prefix, err, e.loopReadings(ctx))
	}
	released = true
	release()
	e.waitSpecReplicas(ctx, t, burstFloor, 2*time.Minute)
	return r
}

// readBurst reads a burst from the pool's watch: seen from the first claim's create, last the
// last claim's create.
func readBurst(seen []framework.Observed[int64], last time.Time) burstResult {
	var r burstResult
	var values []string
	prev, reached := int64(-1), false
	for _, o := range seen {
		values = append(values, fmt.Sprintf("%d@%+.1fs", o.Value, o.At.Sub(last).Seconds()))
		if o.Value != prev && prev >= 0 && !reached {
			// Counted from the first create: a sync that comes before the last create and writes
			// the answer is one write (the HPA saw enough claims), not none.
			r.writes++
			if o.Value != burstReplicas && !o.At.After(last) {
				r.straddled = true
			}
		}
		if o.Value == burstReplicas && !reached {
			r.latency, reached = max(o.At.Sub(last), 0), true
		}
		prev = o.Value
	}
	r.values = strings.Join(values, " ")
	return r
}

// waitScaleUpPolicies waits until the HPA KEDA made for the stack's ScaledObject carries scale-up
// policies ok accepts, and returns them as text.
func (e *env) waitScaleUpPolicies(ctx context.Context, t *testing.T, ok func([]autoscalingv2.HPAScalingPolicy) bool) string {
	t.Helper()
	var got string
	framework.Eventually(t, ctx, "the HPA's scale-up policies", 2*time.Minute, func(ctx context.Context) (bool, error) {
		h, err := e.cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Get(ctx, contract.KedaHPAPrefix+contract.ScaledObjectName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if h.Spec.Behavior == nil || h.Spec.Behavior.ScaleUp == nil {
			got = "none"
			return false, nil
		}
		var p []string
		for _, x := range h.Spec.Behavior.ScaleUp.Policies {
			p = append(p, fmt.Sprintf("%s %d per %d s", x.Type, x.Value, x.PeriodSeconds))
		}
		sel := "Max"
		if s := h.Spec.Behavior.ScaleUp.SelectPolicy; s != nil {
			sel = string(*s)
		}
		got = fmt.Sprintf("%s, select %s", strings.Join(p, " or "), sel)
		return ok(h.Spec.Behavior.ScaleUp.Policies), nil
	})
	return got
}

// waitHPAReadsMetric waits until the HPA KEDA made reports the external metric's current value
// and ScalingActive True: the exporter's count reaches it.
func (e *env) waitHPAReadsMetric(ctx context.Context, t *testing.T) {
	t.Helper()
	framework.Eventually(t, ctx, "the HPA reading the exporter's count through KEDA (a current external metric, ScalingActive True)", 3*time.Minute, func(ctx context.Context) (bool, error) {
		h, err := e.cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Get(ctx, contract.KedaHPAPrefix+contract.ScaledObjectName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		read := slices.ContainsFunc(h.Status.CurrentMetrics, func(m autoscalingv2.MetricStatus) bool { return m.External != nil })
		active := slices.ContainsFunc(h.Status.Conditions, func(c autoscalingv2.HorizontalPodAutoscalerCondition) bool {
			return c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionTrue
		})
		return read && active, nil
	})
}

// loopReadings says, for a failure message, what each part of the loop last showed: the
// exporter's answer, and the HPA's metric, desired replicas and conditions.
func (e *env) loopReadings(ctx context.Context) string {
	var parts []string
	if d, err := framework.Demand(e.demandURL()); err != nil {
		parts = append(parts, fmt.Sprintf("exporter: %v", err))
	} else {
		parts = append(parts, fmt.Sprintf("exporter: active_claims=%d fresh=%v", d.ActiveClaims, d.Fresh))
	}
	h, err := e.cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Get(ctx, contract.KedaHPAPrefix+contract.ScaledObjectName, metav1.GetOptions{})
	if err != nil {
		return strings.Join(append(parts, fmt.Sprintf("HPA: %v", err)), "; ")
	}
	for _, m := range h.Status.CurrentMetrics {
		if m.External != nil {
			parts = append(parts, fmt.Sprintf("HPA metric %s=%s", m.External.Metric.Name, m.External.Current.AverageValue))
		}
	}
	parts = append(parts, fmt.Sprintf("HPA desired=%d current=%d", h.Status.DesiredReplicas, h.Status.CurrentReplicas))
	for _, c := range h.Status.Conditions {
		parts = append(parts, fmt.Sprintf("HPA %s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}
