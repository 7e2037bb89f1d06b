package main

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract/gvr"
	"github.com/warmpool/warm-pool-autoscaling-keda/verify/report"
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
