package verifier

import (
	"context"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// How many steps a burst takes under the scale-up rules, as kube-controller-manager computes
// each step's limit: Kubernetes' defaults take 5 -> 30 through 10 and 20; the program's one
// Pods policy as wide as the ceiling takes it at once.
func TestRiseSteps(t *testing.T) {
	kubernetes := []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
	}
	for _, c := range []struct {
		name     string
		policies []autoscalingv2.HPAScalingPolicy
		sel      autoscalingv2.ScalingPolicySelect
		from, to int64
		want     int
	}{
		{"Kubernetes' defaults, 5 to 30", kubernetes, autoscalingv2.MaxChangePolicySelect, 5, 30, 3},
		{"Kubernetes' defaults, 1 to 4: the 4 pods", kubernetes, autoscalingv2.MaxChangePolicySelect, 1, 4, 1},
		{"Kubernetes' defaults, select Min", kubernetes, autoscalingv2.MinChangePolicySelect, 5, 30, 7},
		{"the program's, 5 to 30", []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 30, PeriodSeconds: 15}}, autoscalingv2.MaxChangePolicySelect, 5, 30, 1},
		{"a policy that adds nothing", []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 0, PeriodSeconds: 15}}, autoscalingv2.MaxChangePolicySelect, 5, 30, -1},
	} {
		if got := riseSteps(c.policies, c.sel, c.from, c.to); got != c.want {
			t.Errorf("%s: %d steps, want %d", c.name, got, c.want)
		}
	}
}

// verify passes the program's ScaledObject, which names its scale-up policy, and fails one that
// names none (its HPA then runs Kubernetes' defaults), saying what a burst takes under them.
func TestPreconditionNamesTheScaleUpPolicy(t *testing.T) {
	const check = "the ScaledObject names its HPA's scale-up policy"
	for _, named := range []bool{true, false} {
		c := newCluster(t)
		c.min, c.max = 1, 30
		c.start()
		ctx := context.Background()
		if !named {
			so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(ctx, "warm-pool", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(so.Object, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleUp", "policies")
			if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// As the API server fills in the HPA KEDA then writes.
			h := waitHPA(t, c)
			h.Spec.Behavior.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
				{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
			}
			if _, err := c.kube.AutoscalingV2().HorizontalPodAutoscalers(testNS).Update(ctx, h, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var buf syncBuffer
		rep := newReport(&buf)
		r := newRunner(testConfig(), c.kube, c.dyn, blueprintExec(), fakeDemand{c: c}, rep)
		_ = r.precondition(ctx)
		got, ev := status(t, rep, check), rep.Find(check)[0].Evidence
		switch {
		case named && (got != report.Pass || !strings.Contains(ev, "a burst from 1 to 30 takes 1 step(s)")):
			t.Errorf("the program's ScaledObject: %q is %s (%s), want PASS saying a burst from 1 to 30 takes 1 step\n%s", check, got, ev, buf.String())
		case !named && (got != report.Fail || !strings.Contains(ev, "Kubernetes' defaults") || !strings.Contains(ev, "takes 4 step(s)")):
			t.Errorf("no scale-up policy: %q is %s (%s), want FAIL naming Kubernetes' defaults and the 4 steps from 1 to 30 (1, 5, 10, 20, 30)\n%s", check, got, ev, buf.String())
		}
	}
}

// waitHPA waits (a minute at most: the fake's loop ticks every few milliseconds) for the HPA the
// fake KEDA creates for the first pool.
func waitHPA(t *testing.T, c *cluster) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		h, err := c.kube.AutoscalingV2().HorizontalPodAutoscalers(testNS).Get(context.Background(), "keda-hpa-warm-pool", metav1.GetOptions{})
		if err == nil {
			return h
		}
		last = err
	}
	t.Fatalf("the fake KEDA made no HPA within a minute: %v", last)
	return nil
}

// ceil divides as the HPA does, on thousandths: 21 claims at target 0.7 are 30 warm sandboxes
// (float division gives 30.000000000000004, whose ceiling would be 31), 43 at 1.5 are 29.
func TestCeilIsTheHPAs(t *testing.T) {
	for _, c := range []struct {
		n      int
		target float64
		want   int64
	}{{21, 0.7, 30}, {21, 1.4, 15}, {7, 0.7, 10}, {43, 1.5, 29}, {3, 1, 3}, {1, 2, 1}, {0, 1.5, 0}} {
		r := &Runner{target: c.target}
		if got := r.ceil(c.n); got != c.want {
			t.Errorf("ceil(%d / %g) = %d, want %d", c.n, c.target, got, c.want)
		}
	}
}
