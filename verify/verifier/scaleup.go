package verifier

import (
	"fmt"
	"math"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// judgeScaleUp says which scale-up policy the HPA carries and how many of its periods a burst
// from the pool's floor to its ceiling takes under it, and fails a ScaledObject that names no
// scale-up policy: the API server then gives the HPA Kubernetes' defaults (the larger of 4 pods
// or 100 % per 15 s), which hold every burst wider than that back by a sync per doubling, while
// nothing the team reads says so. The program always names one.
func (r *Runner) judgeScaleUp(ph string, h *autoscalingv2.HorizontalPodAutoscaler, so *unstructured.Unstructured) {
	const name = "the ScaledObject names its HPA's scale-up policy"
	declared, _, _ := unstructured.NestedSlice(so.Object, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleUp", "policies")
	var up *autoscalingv2.HPAScalingRules
	if h.Spec.Behavior != nil {
		up = h.Spec.Behavior.ScaleUp
	}
	how := describeScaleUp(up, max(r.min, 1), r.max)
	if len(declared) == 0 {
		r.rep.Fail(ph, name, fmt.Sprintf("scaledobject/%s names no scale-up policy, so the HPA runs Kubernetes' defaults: %s; a burst waits a sync for each doubling (set the program's scaleUp, or run pulumi up: it writes one)", r.cfg.ScaledObject, how))
		return
	}
	r.rep.Pass(ph, name, how)
}

// describeScaleUp says what the HPA's scale-up rules are and how many steps of their periods a
// rise from `from` to `to` takes (kube-controller-manager's calculateScaleUpLimitWithScalingRules,
// each step from the size the period began with).
func describeScaleUp(up *autoscalingv2.HPAScalingRules, from, to int64) string {
	if up == nil {
		return "no scale-up rules on the HPA"
	}
	sel := autoscalingv2.MaxChangePolicySelect
	if up.SelectPolicy != nil {
		sel = *up.SelectPolicy
	}
	var p []string
	for _, pol := range up.Policies {
		p = append(p, fmt.Sprintf("%d %s per %d s", pol.Value, strings.ToLower(string(pol.Type)), pol.PeriodSeconds))
	}
	window := int32(0)
	if up.StabilizationWindowSeconds != nil {
		window = *up.StabilizationWindowSeconds
	}
	how := fmt.Sprintf("scale-up %s (select %s), stabilization %d s", strings.Join(p, " or "), sel, window)
	if sel == autoscalingv2.DisabledPolicySelect {
		return how + ": the pool never grows"
	}
	steps := riseSteps(up.Policies, sel, from, to)
	if steps < 0 {
		return how + fmt.Sprintf(": a rise from %d to %d never completes", from, to)
	}
	return how + fmt.Sprintf(": a burst from %d to %d takes %d step(s)", from, to, steps)
}

// riseSteps is how many steps the policies take from `from` to `to`; -1 when a step adds nothing.
func riseSteps(policies []autoscalingv2.HPAScalingPolicy, sel autoscalingv2.ScalingPolicySelect, from, to int64) int {
	steps := 0
	for n := from; n < to; steps++ {
		limit := int64(math.MinInt64)
		if sel == autoscalingv2.MinChangePolicySelect {
			limit = math.MaxInt64
		}
		for _, pol := range policies {
			proposed := n + int64(pol.Value)
			if pol.Type == autoscalingv2.PercentScalingPolicy {
				proposed = int64(math.Ceil(float64(n) * (1 + float64(pol.Value)/100)))
			}
			if sel == autoscalingv2.MinChangePolicySelect {
				limit = min(limit, proposed)
			} else {
				limit = max(limit, proposed)
			}
		}
		if limit <= n {
			return -1
		}
		n = min(limit, to)
	}
	return steps
}
