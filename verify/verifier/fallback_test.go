package verifier

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// verify fails while KEDA holds the pool on its fallback or a trigger is failing, passes on
// KEDA's own "no fallback" reading, and says N/A while KEDA has written none.
func TestFallbackIsNeverSilent(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	const check = "KEDA reads the exporter"
	cases := []struct {
		name   string
		status func(st map[string]any)
		// clears: the status goes back to KEDA's healthy reading this long after the run starts;
		// the check then reads again for up to a minute (not testConfig's 1 s, which a loaded
		// machine has spent before the status cleared), a wait that ends once it has.
		clears time.Duration
		want   report.Status
		says   string
	}{
		{name: "a blip that clears at KEDA's next read", status: func(st map[string]any) {
			st["health"] = map[string]any{"s0-metric-api-active_claims": map[string]any{"numberOfFailures": int64(2), "status": "Failing"}}
		}, clears: 300 * time.Millisecond, want: report.Pass, says: "Happy after 0 failures"},
		{name: "KEDA reads the exporter", status: func(map[string]any) {}, want: report.Pass, says: "Fallback=False (NoFallbackFound"},
		{name: "fallback active", status: func(st map[string]any) {
			st["conditions"].([]any)[1] = map[string]any{"type": "Fallback", "status": "True", "reason": "FallbackExists", "message": "At least one trigger is falling back on this scaled object"}
			st["health"] = map[string]any{"s0-metric-api-active_claims": map[string]any{"numberOfFailures": int64(7), "status": "Failing"}}
		}, want: report.Fail, says: "s0-metric-api-active_claims Failing after 7 failures"},
		{name: "a trigger failing below the threshold", status: func(st map[string]any) {
			st["health"] = map[string]any{"s0-metric-api-active_claims": map[string]any{"numberOfFailures": int64(1), "status": "Failing"}}
		}, want: report.Fail, says: "KEDA cannot read s0-metric-api-active_claims"},
		{name: "condition reset to Unknown, every trigger Happy", status: func(st map[string]any) {
			st["conditions"].([]any)[1] = map[string]any{"type": "Fallback", "status": "Unknown"}
		}, want: report.Pass, says: "Fallback=Unknown"},
		{name: "nothing written yet", status: func(st map[string]any) {
			delete(st, "conditions")
			delete(st, "health")
		}, want: report.NA, says: "no Fallback condition; health: <none>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			ctx := context.Background()
			so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(ctx, "warm-pool", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.status(so.Object["status"].(map[string]any))
			if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.clears > 0 {
				go func() {
					time.Sleep(tc.clears)
					so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(ctx, "warm-pool", metav1.GetOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					so.Object["status"].(map[string]any)["health"] = map[string]any{"s0-metric-api-active_claims": map[string]any{"numberOfFailures": int64(0), "status": "Happy"}}
					if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
						t.Error(err)
					}
				}()
			}
			var buf syncBuffer
			rep := newReport(&buf)
			cfg := testConfig()
			if tc.clears > 0 {
				cfg.ExporterTimeout = time.Minute
			}
			r := newRunner(cfg, c.kube, c.dyn, blueprintExec(), fakeDemand{c: c}, rep)
			_ = r.precondition(ctx)
			if got := status(t, rep, check); got != tc.want {
				t.Fatalf("%s: %s, want %s\n%s", check, got, tc.want, buf.String())
			}
			if !strings.Contains(buf.String(), tc.says) {
				t.Errorf("the evidence does not say %q:\n%s", tc.says, buf.String())
			}
		})
	}
}

// KEDA's rule for using a fallback, on the ScaledObjects a stack can carry: the program's (no
// formula; a formula at target 1) pass, and every one KEDA v2.21 would ignore fails, saying why.
func TestFallbackUsable(t *testing.T) {
	so := func(fallback map[string]any, modifiers map[string]any) *unstructured.Unstructured {
		spec := map[string]any{}
		if fallback != nil {
			spec["fallback"] = fallback
		}
		if modifiers != nil {
			spec["advanced"] = map[string]any{"scalingModifiers": modifiers}
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	}
	fb := map[string]any{"failureThreshold": int64(3), "replicas": int64(0), "behavior": "currentReplicasIfHigher"}
	for _, c := range []struct {
		name      string
		so        *unstructured.Unstructured
		ok        bool
		evidenced string
	}{
		{"no formula", so(fb, nil), true, "no scalingModifiers formula"},
		{"a formula at target 1", so(fb, map[string]any{"formula": "claims / 1.5 + 2", "target": "1"}), true, `target "1"`},
		{"a formula at target 2", so(fb, map[string]any{"formula": "claims + 4", "target": "2"}), true, `target "2"`},
		{"a formula at target 1.5", so(fb, map[string]any{"formula": "claims + 3", "target": "1.5"}), false, "positive integer"},
		{"a formula at target 1.0", so(fb, map[string]any{"formula": "claims + 1", "target": "1.0"}), false, `"1.0"`},
		{"a formula at target 0", so(fb, map[string]any{"formula": "claims + 1", "target": "0"}), false, "positive integer"},
		{"no fallback", so(nil, nil), false, "spec.fallback is absent"},
		{"a negative threshold", so(map[string]any{"failureThreshold": int64(-1), "replicas": int64(0)}, nil), false, "at least 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, ev := fallbackUsable(c.so)
			if ok != c.ok || !strings.Contains(ev, c.evidenced) {
				t.Errorf("fallbackUsable = %t, %q; want %t, evidence naming %q", ok, ev, c.ok, c.evidenced)
			}
		})
	}
}
