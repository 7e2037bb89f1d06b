package verifier

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

func TestScaleDownPaceIsWhatTheHPAWrote(t *testing.T) {
	i32 := func(n int32) *int32 { return &n }
	sel := func(s autoscalingv2.ScalingPolicySelect) *autoscalingv2.ScalingPolicySelect { return &s }
	pods := func(v, period int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: period}
	}
	pct := func(v, period int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: v, PeriodSeconds: period}
	}
	behaviour := func(window int32, s *autoscalingv2.ScalingPolicySelect, ps ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HorizontalPodAutoscalerBehavior {
		return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: i32(window), SelectPolicy: s, Policies: ps}}
	}
	for _, tc := range []struct {
		name     string
		b        *autoscalingv2.HorizontalPodAutoscalerBehavior
		from, to int64
		window   time.Duration
		rate     time.Duration
		disabled bool
	}{
		{"no behaviour: the controller's 300 s", nil, 10, 1, 300 * time.Second, 0, false},
		{"the program's demo drop: one step", behaviour(0, nil, pods(3, 15)), 3, 1, 0, 0, false},
		{"the production default: a window, one step", behaviour(60, nil, pods(10, 15)), 10, 1, 60 * time.Second, 0, false},
		// 10 -> 1 at 2 pods per 30 s: 8, 6, 4, 2, 1 is five steps, four periods after the first.
		{"a rate: four more periods", behaviour(0, nil, pods(2, 30)), 10, 1, 0, 120 * time.Second, false},
		// 10 -> 5 -> 2 -> 1 at 50 %: three steps.
		{"percent", behaviour(0, nil, pct(50, 15)), 10, 1, 0, 30 * time.Second, false},
		// Max (the default) takes the fastest policy; Min the slowest.
		{"two policies, Max", behaviour(0, nil, pods(1, 15), pods(9, 15)), 10, 1, 0, 0, false},
		{"two policies, Min", behaviour(0, sel(autoscalingv2.MinChangePolicySelect), pods(1, 15), pods(9, 15)), 10, 1, 0, 120 * time.Second, false},
		{"disabled", behaviour(0, sel(autoscalingv2.DisabledPolicySelect), pods(1, 15)), 10, 1, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := readScaleDownPace(tc.b, tc.from, tc.to)
			if p.window != tc.window || p.rate != tc.rate || p.disabled != tc.disabled {
				t.Fatalf("read window %s rate %s disabled %v, want %s %s %v (%s)", p.window, p.rate, p.disabled, tc.window, tc.rate, tc.disabled, p.how)
			}
			if !strings.Contains(p.how, "stabilization "+tc.window.String()) {
				t.Fatalf("the evidence line %q does not say the window %s", p.how, tc.window)
			}
		})
	}
}
