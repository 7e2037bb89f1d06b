package verifier

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// scaleDownPace is what the HPA's scale-down behaviour lets a drop take, as the stack wrote it:
// the stabilization window (the HPA keeps the highest size recommended within it), then the
// rate policies' periods for a drop wider than one step allows.
type scaleDownPace struct {
	window time.Duration
	// rate is the extra time the policies need for the widest drop verify makes (maxReplicas
	// to minReplicas) beyond its first step; 0 when one step allows it.
	rate time.Duration
	// disabled: selectPolicy Disabled, the HPA never scales the pool down.
	disabled bool
	how      string
}

// readScaleDownPace reads the HPA's behaviour; without one, kube-controller-manager's defaults
// (a 300 s window, any drop at once).
func readScaleDownPace(b *autoscalingv2.HorizontalPodAutoscalerBehavior, from, to int64) scaleDownPace {
	p := scaleDownPace{window: defaultDownStabilization}
	if b == nil || b.ScaleDown == nil {
		p.how = fmt.Sprintf("scale-down stabilization %s (the controller's default)", p.window)
		return p
	}
	sd := b.ScaleDown
	if sd.StabilizationWindowSeconds != nil {
		p.window = time.Duration(*sd.StabilizationWindowSeconds) * time.Second
	}
	p.how = fmt.Sprintf("scale-down stabilization %s", p.window)
	if sd.SelectPolicy != nil && *sd.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		p.disabled = true
		p.how += ", scale-down disabled (selectPolicy Disabled): the pool never shrinks"
		return p
	}
	min := sd.SelectPolicy != nil && *sd.SelectPolicy == autoscalingv2.MinChangePolicySelect
	var best time.Duration
	for i, pol := range sd.Policies {
		d := dropTime(pol, from, to)
		if i == 0 || (!min && d < best) || (min && d > best) {
			best = d
		}
		p.how += fmt.Sprintf(", at most %d %s per %d s", pol.Value, map[autoscalingv2.HPAScalingPolicyType]string{
			autoscalingv2.PodsScalingPolicy: "pods", autoscalingv2.PercentScalingPolicy: "percent"}[pol.Type], pol.PeriodSeconds)
	}
	p.rate = best
	if p.rate > 0 {
		p.how += fmt.Sprintf(" (a drop from %d to %d takes %s beyond the window)", from, to, p.rate)
	}
	return p
}

// dropTime is how long one policy makes a drop from `from` to `to` wait beyond its first step:
// one period per further step.
func dropTime(pol autoscalingv2.HPAScalingPolicy, from, to int64) time.Duration {
	steps := int64(0)
	for n := from; n > to; steps++ {
		switch pol.Type {
		case autoscalingv2.PercentScalingPolicy:
			// kube-controller-manager: int32(periodStart * (1 - value/100)), at least one less.
			n = min(int64(float64(n)*(1-float64(pol.Value)/100)), n-1)
		default:
			n -= int64(max(pol.Value, 1))
		}
	}
	if steps <= 1 {
		return 0
	}
	return time.Duration(steps-1) * time.Duration(pol.PeriodSeconds) * time.Second
}

// total is the whole allowance a scale-down step adds to its timeout.
func (p scaleDownPace) total() time.Duration { return p.window + p.rate }
