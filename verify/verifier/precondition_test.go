package verifier

import (
	"context"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// The precondition accepts KEDA's HPA on the pool and rejects every other
// shape of autoscaler.
func TestPrecondition(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(h *autoscalingv2.HorizontalPodAutoscaler)
		loadCap  int
		noHPA    bool
		bounds   *[2]int64 // the ScaledObject's min and max (default 1, 3)
		soMutate func(so map[string]any)
		wantFail string // "" = all pass
		wantMin  int64
	}{
		{name: "KEDA's HPA on the pool", wantMin: 1},
		// KEDA's HPA says minReplicas 1 here; the floor is the ScaledObject's 0.
		{name: "minReplicaCount 0", bounds: &[2]int64{0, 3}, wantMin: 0},
		{name: "bounds absent: KEDA's defaults 0 and 100", soMutate: func(so map[string]any) {
			delete(so, "minReplicaCount")
			delete(so, "maxReplicaCount")
		}, wantMin: 0},
		{name: "min = max = 1: the load cannot move the pool", bounds: &[2]int64{1, 1}, loadCap: 1, wantFail: "the load can move the pool"},
		{name: "min = max = 3: the load cannot move the pool", bounds: &[2]int64{3, 3}, wantFail: "the load can move the pool"},
		{name: "target above the load cap", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
			five := resource.MustParse("5")
			h.Spec.Metrics[0].External.Target.AverageValue = &five
		}, wantFail: "the load can move the pool"},
		{name: "ScaledObject bounds unreadable", soMutate: func(so map[string]any) { so["minReplicaCount"] = "one" }, wantFail: "the ScaledObject's bounds are readable"},
		{name: "ScaledObject min above max", soMutate: func(so map[string]any) { so["minReplicaCount"] = int64(5) }, wantFail: "the ScaledObject's bounds are readable"},
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
			if tc.bounds != nil {
				c.min, c.max = tc.bounds[0], tc.bounds[1]
			}
			c.start()
			ctx := context.Background()
			if tc.soMutate != nil {
				so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(ctx, "warm-pool", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				spec := so.Object["spec"].(map[string]any)
				tc.soMutate(spec)
				if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
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
				wantMax := int64(3)
				if tc.soMutate != nil {
					wantMax = 100
				}
				if r.min != tc.wantMin || r.max != wantMax || r.target != 1 || r.downPace.window != 0 {
					t.Fatalf("bounds read wrong: min %d max %d target %g window %s", r.min, r.max, r.target, r.downPace.window)
				}
				return
			}
			if err == nil {
				t.Error("the later phases must not run on a failed precondition")
			}
			if got := status(t, rep, tc.wantFail); got != report.Fail {
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

func TestExpectedMappingWithHeadroom(t *testing.T) {
	r := &Runner{min: 1, max: 5, target: 1, headroom: 2}
	for claims, want := range []int64{2, 3, 4, 5, 5, 5} {
		if got := r.expected(claims); got != want {
			t.Errorf("target 1 headroom 2, %d claims: %d, want %d", claims, got, want)
		}
	}
}

// The program's `headroom` key writes a scalingModifiers formula; verify holds
// each step to ceil(claims/target)+headroom, and refuses a formula it cannot model.
func TestPreconditionReadsTheHeadroomFormula(t *testing.T) {
	cases := []struct {
		name         string
		formula      any
		wantHeadroom int64
		wantFail     bool
	}{
		{name: "no formula", formula: nil, wantHeadroom: 0},
		{name: "claims + 2 at target 1", formula: "claims + 2", wantHeadroom: 2},
		{name: "claims + 1.0 at target 1", formula: "claims+1.0", wantHeadroom: 1},
		{name: "claims / 1.5 + 2 at target 1", formula: "claims / 1.5 + 2", wantHeadroom: 2},
		{name: "a division by zero", formula: "claims / 0 + 2", wantFail: true},
		{name: "a product", formula: "claims * 2", wantFail: true},
		{name: "two triggers", formula: "claims + other", wantFail: true},
		{name: "half a target", formula: "claims + 0.5", wantFail: true},
		{name: "not a string", formula: int64(3), wantFail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.min, c.max = 1, 5
			c.start()
			ctx := context.Background()
			if tc.formula != nil {
				so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(ctx, "warm-pool", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				spec := so.Object["spec"].(map[string]any)
				spec["advanced"].(map[string]any)["scalingModifiers"] = map[string]any{"formula": tc.formula, "target": "1"}
				if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var buf syncBuffer
			rep := newReport(&buf)
			r := newRunner(testConfig(), c.kube, c.dyn, blueprintExec(), fakeDemand{c: c}, rep)
			err := r.precondition(ctx)
			const check = "the HPA's metric maps claims to warm sandboxes"
			if tc.wantFail {
				if got := status(t, rep, check); got != report.Fail {
					t.Fatalf("%q is %s, want FAIL for formula %v\n%s", check, got, tc.formula, buf.String())
				}
				if err == nil {
					t.Error("the later phases must not run on a failed precondition")
				}
				return
			}
			if err != nil || !rep.OK() {
				t.Fatalf("%v %v\n%s", err, rep.Failures(), buf.String())
			}
			if r.headroom != tc.wantHeadroom {
				t.Fatalf("headroom %d, want %d\n%s", r.headroom, tc.wantHeadroom, buf.String())
			}
		})
	}
}
