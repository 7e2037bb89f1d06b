package program

import (
	"math"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
)

// readScaleDown reads a `scaleDown` object; each unset field keeps def's (a listed pool's
// default is the top-level scaleDown, whose default is components.DefaultScaleDown).
func readScaleDown(o configObject, def components.ScaleDown) components.ScaleDown {
	s := components.ScaleDown{
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
				"value":         "any drop in one step",
				"periodSeconds": "one HPA sync, 15 s",
			}[k.key])
		}
	}
	if _, set := o.m["policy"]; set && s.Value == 0 {
		o.fail("%spolicy is %q without %svalue; give the most the pool may shrink per period (`pulumi config set --path '%svalue' 2`), or remove policy", o.at, s.Policy, o.at, o.at)
	}
	o.done(o.keysRead())
	return s
}

// validateScaleDown holds a pool's scale-down behaviour to the HPA API's own rules.
func validateScaleDown(p *Pool, padd func(string, ...any)) {
	s := p.ScaleDown
	if s.StabilizationWindowSeconds < 0 || s.StabilizationWindowSeconds > components.MaxStabilizationWindowSeconds {
		padd("scaleDown.stabilizationWindowSeconds is %d; it must be 0..%d (the HPA's bound): how long the pool keeps the highest size recommended within it, %d by default",
			s.StabilizationWindowSeconds, components.MaxStabilizationWindowSeconds, components.DefaultScaleDownWindowSeconds)
	}
	switch s.Policy {
	case "", components.ScaleDownPods:
		if s.Value > math.MaxInt32 {
			padd("scaleDown.value is %d; the HPA's policy value is 32-bit, and above maxReplicas it limits nothing: remove it or give at most %d", s.Value, p.MaxReplicas)
		}
	case components.ScaleDownPercent:
		if s.Value > 100 {
			padd("scaleDown.value is %d with policy Percent; a pool cannot shrink by more than 100%% of itself in a period, so give 1..100", s.Value)
		}
	default:
		padd("scaleDown.policy is %q; it must be %s (at most value sandboxes per period) or %s (at most value percent of the pool per period)",
			s.Policy, components.ScaleDownPods, components.ScaleDownPercent)
	}
	if s.PeriodSeconds > components.MaxScalingPeriodSeconds {
		padd("scaleDown.periodSeconds is %d; it must be 1..%d (the HPA's bound)", s.PeriodSeconds, components.MaxScalingPeriodSeconds)
	}
}
