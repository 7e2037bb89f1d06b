package main

import (
	"context"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The precondition accepts KEDA's HPA on the pool and rejects every other
// shape of autoscaler.
func TestPrecondition(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(h *autoscalingv2.HorizontalPodAutoscaler)
		loadCap  int
		noHPA    bool
		wantFail string // "" = all pass
	}{
		{name: "KEDA's HPA on the pool"},
		{name: "no HPA", noHPA: true, wantFail: "an HPA targets the pool"},
		{name: "targets a Deployment of the same name", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.APIVersion = "Deployment", "apps/v1"
		}, wantFail: "the HPA scales the SandboxWarmPool itself"},
		{name: "not owned by the ScaledObject", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.OwnerReferences = nil }, wantFail: "the HPA is owned by the ScaledObject"},
		{name: "owned by another ScaledObject", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.OwnerReferences[0].Name = "other" }, wantFail: "the HPA is owned by the ScaledObject"},
		{name: "metricType Value", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].External.Target.Type = autoscalingv2.ValueMetricType
		}, wantFail: "maps claims to warm sandboxes"},
		{name: "load above the bound", loadCap: 4, wantFail: "the load verify generates is within the bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			ctx := context.Background()
			hpas := c.kube.AutoscalingV2().HorizontalPodAutoscalers(testNS)
			if tc.noHPA {
				c.noKEDA.Store(true)
				_ = hpas.Delete(ctx, "keda-hpa-warm-pool", metav1.DeleteOptions{})
			}
			if tc.mutate != nil {
				h, err := hpas.Get(ctx, "keda-hpa-warm-pool", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				tc.mutate(h)
				if _, err := hpas.Update(ctx, h, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cfg := testConfig()
			if tc.loadCap != 0 {
				cfg.LoadCap = tc.loadCap
			}
			var buf syncBuffer
			rep := newReport(&buf)
			r := newRunner(cfg, c.kube, c.dyn, blueprintExec(), fakeDemand{c: c}, rep)
			err := r.precondition(ctx)
			if tc.wantFail == "" {
				if err != nil || !rep.OK() {
					t.Fatalf("%v %v\n%s", err, rep.Failures(), buf.String())
				}
				if r.min != 1 || r.max != 3 || r.target != 1 || r.downWindow != 0 {
					t.Fatalf("bounds read wrong: min %d max %d target %g window %s", r.min, r.max, r.target, r.downWindow)
				}
				return
			}
			if err == nil {
				t.Error("the later phases must not run on a failed precondition")
			}
			if got := status(t, rep, tc.wantFail); got != Fail {
				t.Fatalf("%q is %s, want FAIL\n%s", tc.wantFail, got, buf.String())
			}
		})
	}
}

func TestExpectedMapping(t *testing.T) {
	r := &Runner{min: 1, max: 3, target: 1}
	for claims, want := range []int64{1, 1, 2, 3, 3, 3} {
		if got := r.expected(claims); got != want {
			t.Errorf("target 1, %d claims: %d, want %d", claims, got, want)
		}
	}
	r = &Runner{min: 0, max: 5, target: 2}
	for claims, want := range []int64{0, 1, 1, 2, 2, 3} {
		if got := r.expected(claims); got != want {
			t.Errorf("target 2 min 0, %d claims: %d, want %d", claims, got, want)
		}
	}
}
