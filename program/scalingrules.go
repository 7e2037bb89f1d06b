package program

import (
	"math"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// scalingDirection names one side of the HPA's behaviour in messages: its key and what a change
// of the pool is called.
type scalingDirection struct {
	key    string // "scaleUp" or "scaleDown"
	change string // "rise" or "drop"
	verb   string // "grow" or "shrink"
	// windowMeans says what the stabilization window does in this direction.
	windowMeans string
	defWindow   int
}

var (
	scaleUpDirection = scalingDirection{"scaleUp", "rise", "grow",
		"the pool keeps the lowest size recommended within it", components.DefaultScaleUp().StabilizationWindowSeconds}
	scaleDownDirection = scalingDirection{"scaleDown", "drop", "shrink",
		"the pool keeps the highest size recommended within it", components.DefaultScaleDown().StabilizationWindowSeconds}
)

// readScalingRules reads a `scaleUp` or `scaleDown` object; each unset field keeps def's (a
// listed pool's default is the top-level key's, whose default is components.DefaultScaleUp or
// DefaultScaleDown).
func readScalingRules(o configObject, def components.ScalingRules, d scalingDirection) components.ScalingRules {
	s := components.ScalingRules{
		StabilizationWindowSeconds: o.integer("stabilizationWindowSeconds", def.StabilizationWindowSeconds),
		Policy:                     o.str("policy", def.Policy),
		Value:                      o.integer("value", def.Value),
		PeriodSeconds:              o.integer("periodSeconds", def.PeriodSeconds),
	}
	// Zero is the program's "as wide as the pool's range" and "one HPA sync"; written out, the
	// API server would refuse it, so it is refused here, naming the key.
	for _, k := range []struct {
		key string
		n   int
	}{{"value", s.Value}, {"periodSeconds", s.PeriodSeconds}} {
		if _, set := o.m[k.key]; set && k.n < 1 {
			o.fail("%s%s is %d; it must be at least 1 (remove it for the default: %s)", o.at, k.key, k.n, map[string]string{
				"value":         "any " + d.change + " in one step",
				"periodSeconds": "one HPA sync, 15 s",
			}[k.key])
		}
	}
	if _, set := o.m["policy"]; set && s.Value == 0 {
		o.fail("%spolicy is %q without %svalue; give the most the pool may %s per period (`pulumi config set --path '%svalue' 2`), or remove policy", o.at, s.Policy, o.at, d.verb, o.at)
	}
	o.done(o.keysRead())
	return s
}

// validateScalingRules holds one direction of a pool's HPA behaviour to the HPA API's own rules.
func validateScalingRules(s components.ScalingRules, maxReplicas int, d scalingDirection, padd func(string, ...any)) {
	if s.StabilizationWindowSeconds < 0 || s.StabilizationWindowSeconds > components.MaxStabilizationWindowSeconds {
		padd("%s.stabilizationWindowSeconds is %d; it must be 0..%d (the HPA's bound): how long %s, %d by default",
			d.key, s.StabilizationWindowSeconds, components.MaxStabilizationWindowSeconds, d.windowMeans, d.defWindow)
	}
	switch s.Policy {
	case "", components.PolicyPods:
		if s.Value > math.MaxInt32 {
			padd("%s.value is %d; the HPA's policy value is 32-bit, and above maxReplicas it limits nothing: remove it or give at most %d", d.key, s.Value, maxReplicas)
		}
	case components.PolicyPercent:
		// A rise of more than 100 % in a period is valid (the HPA multiplies); a drop is not.
		if d.key == scaleDownDirection.key && s.Value > 100 {
			padd("%s.value is %d with policy Percent; a pool cannot shrink by more than 100%% of itself in a period, so give 1..100", d.key, s.Value)
		}
		if s.Value > math.MaxInt32 {
			padd("%s.value is %d; the HPA's policy value is 32-bit", d.key, s.Value)
		}
	default:
		padd("%s.policy is %q; it must be %s (at most value sandboxes per period) or %s (at most value percent of the pool per period)",
			d.key, s.Policy, components.PolicyPods, components.PolicyPercent)
	}
	if s.PeriodSeconds > components.MaxScalingPeriodSeconds {
		padd("%s.periodSeconds is %d; it must be 1..%d (the HPA's bound)", d.key, s.PeriodSeconds, components.MaxScalingPeriodSeconds)
	}
}
