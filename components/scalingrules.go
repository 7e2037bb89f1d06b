package components

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// The HPA's scaling policy types (autoscaling/v2 HPAScalingPolicyType).
const (
	PolicyPods    = "Pods"
	PolicyPercent = "Percent"
)

// Bounds the API server puts on an HPA's behaviour (autoscaling/v2 validation).
const (
	MaxStabilizationWindowSeconds = 3600
	MaxScalingPeriodSeconds       = 1800
)

// ScalingRules is one direction of the HPA's behaviour, as the program renders it: a
// stabilization window and one rate policy (at most Value pods, or Value percent of the pool,
// per PeriodSeconds).
//
// The zero value is a change in one HPA sync: no window, and Value 0 meaning one Pods policy as
// wide as the pool's range. For scale-up it is the default: a warm sandbox that arrives a sync
// late is the cold start the pool exists to prevent, and maxReplicas already bounds a runaway
// reading. It is written out as a policy on purpose: a scale-up without policies gets
// Kubernetes' defaults (the larger of 4 pods or 100 % per 15 s), which take a burst from 5 to
// 30 sandboxes through three syncs (pkg/apis/autoscaling/v2/defaults.go).
type ScalingRules struct {
	StabilizationWindowSeconds int
	Policy                     string // PolicyPods (also when empty) or PolicyPercent
	Value                      int    // 0: the pool's maxReplicas, in Pods
	PeriodSeconds              int    // 0: DefaultScalingPeriodSeconds
}

// DefaultScalingPeriodSeconds is the HPA's sync period on EKS, so a policy's period is a whole
// number of syncs.
const DefaultScalingPeriodSeconds = 15

// DefaultScaleDownWindowSeconds is the production default of the stabilization window: two HPA
// syncs, the shortest window that holds anything back (at 15 s the last recommendation is already
// outside it), so a drop must be read on two syncs before warm sandboxes are given up. The burst
// model (`go test -C e2e -run '^$' -bench ScaleDown -benchtime 1x ./bursts`, docs/bursts.md, both
// traces on seeds 1..30 and 1001..1030) shows each longer window buying warm hits at more idle
// cost than a larger fixed pool would: the recommended arrivals policy with a floor stays
// undominated by every fixed size on 111 of 120 seed-traces at 30 s, 97 at 60 s, 71 at
// Kubernetes' default of 300 s. Raise it where a re-boot costs more than the model's 6 s boot.
const DefaultScaleDownWindowSeconds = 30

// DefaultScaleDown is the production scale-down: DefaultScaleDownWindowSeconds, then any drop in
// one sync (the window already holds the size through a lull; a rate limit on top only delays
// releasing sandboxes the window has decided nobody needs).
func DefaultScaleDown() ScalingRules {
	return ScalingRules{StabilizationWindowSeconds: DefaultScaleDownWindowSeconds}
}

// DefaultScaleUp is the production scale-up: any rise in one sync, no window.
func DefaultScaleUp() ScalingRules { return ScalingRules{} }

// Resolved fills the zero value's defaults for a pool bounded by maxReplicas.
func (s ScalingRules) Resolved(maxReplicas int) ScalingRules {
	if s.Policy == "" {
		s.Policy = PolicyPods
	}
	if s.Value == 0 {
		s.Policy, s.Value = PolicyPods, max(maxReplicas, 1)
	}
	if s.PeriodSeconds == 0 {
		s.PeriodSeconds = DefaultScalingPeriodSeconds
	}
	return s
}

// hpaBehavior is the HPA's behaviour, both directions with their policy written out, so the API
// server fills in no policy of its own.
func hpaBehavior(up, down ScalingRules, maxReplicas int) pulumi.Map {
	return pulumi.Map{
		"behavior": pulumi.Map{
			"scaleUp":   up.Resolved(maxReplicas).hpaRules(),
			"scaleDown": down.Resolved(maxReplicas).hpaRules(),
		},
	}
}

// hpaRules is a resolved ScalingRules as autoscaling/v2 HPAScalingRules.
func (s ScalingRules) hpaRules() pulumi.Map {
	return pulumi.Map{
		"stabilizationWindowSeconds": pulumi.Int(s.StabilizationWindowSeconds),
		"policies": pulumi.Array{pulumi.Map{
			"type":          pulumi.String(s.Policy),
			"value":         pulumi.Int(s.Value),
			"periodSeconds": pulumi.Int(s.PeriodSeconds),
		}},
	}
}
