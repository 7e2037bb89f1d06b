package components

import (
	"math"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

func arrivalsSizing() Sizing {
	s := DefaultSizing()
	s.Policy = SizingArrivals
	return s
}

// The formula's spares are the exact Poisson quantile (+1) over the range a pool meets: the
// approximation may be one above exact (a spare too many), never below (a missed warm hit).
func TestArrivalsSparesMatchThePoissonQuantile(t *testing.T) {
	for _, target := range []float64{0.9, 0.95, 0.99, 0.999} {
		s := arrivalsSizing()
		s.WarmHitTarget = target
		l := float64(s.RefillSeconds())
		above := 0
		for short := 0.0; short <= 400; short++ {
			m := round6(l/float64(s.ShortWindowSeconds)) * short
			got := ArrivalsSpares(s, 0, short, 0)
			want := 0.0
			if m > 0 {
				want = float64(PoissonQuantile(m, target) + 1)
			}
			require.GreaterOrEqualf(t, got, want, "target %v, m %.3f: %v spares, the exact quantile needs %v", target, m, got, want)
			require.LessOrEqualf(t, got, want+1, "target %v, m %.3f: %v spares, exact %v", target, m, got, want)
			if got > want {
				above++
			}
		}
		assert.Lessf(t, above, 40, "target %v: the approximation was above exact %d times in 400", target, above)
	}
}

// The formula as KEDA runs it (expr-lang v1.17.8, KEDA v2.21.0's pin): it compiles and runs on
// KEDA's validation dummies (-1 for every trigger) and equals ArrivalsSpares on real readings.
func TestArrivalsFormulaRunsInKedasExpressionLanguage(t *testing.T) {
	s := arrivalsSizing()
	formula := ArrivalsFormula(s, 2)
	assert.True(t, strings.HasPrefix(formula, "float("), "KEDA wraps a formula in float( unless it starts so")
	env := map[string]float64{ArrivalsShortTrigger: -1, ArrivalsLongTrigger: -1}
	program, err := expr.Compile(formula, expr.Env(env))
	require.NoError(t, err, formula)
	dummy, err := expr.Run(program, env)
	require.NoError(t, err)
	assert.Equal(t, 2.0, dummy, "KEDA's validation values give the headroom alone")
	for _, r := range [][2]float64{{0, 0}, {1, 0}, {0, 1}, {3, 7}, {12, 20}, {40, 90}, {2, 200}} {
		out, err := expr.Run(program, map[string]any{ArrivalsShortTrigger: r[0], ArrivalsLongTrigger: r[1]})
		require.NoError(t, err)
		assert.Equalf(t, ArrivalsSpares(s, 2, r[0], r[1]), out, "arrivals %v", r)
	}
	// Broken once: a formula without the rate's max reads only the short window.
	broken := strings.Replace(formula, "max(", "min(", 1)
	p2, err := expr.Compile(broken, expr.Env(env))
	require.NoError(t, err)
	out, err := expr.Run(p2, map[string]any{ArrivalsShortTrigger: 0.0, ArrivalsLongTrigger: 90.0})
	require.NoError(t, err)
	assert.NotEqual(t, ArrivalsSpares(s, 2, 0, 90), out, "the comparison must be able to fail")
}

// The parameters move the size the way a platform team expects: a longer boot or a higher target
// each ask for more spares, the HPA's sync does not (a pool whose size holds refills in a boot);
// no arrivals ask for none beyond the headroom.
func TestArrivalsSparesFollowTheirParameters(t *testing.T) {
	base := arrivalsSizing()
	at := func(s Sizing) float64 { return ArrivalsSpares(s, 0, 10, 30) }
	longer := base
	longer.BootSeconds = 60
	slower := base
	slower.HPASyncSeconds = 60
	assert.Equal(t, at(base), at(slower), "the HPA's sync delays a change of size; it does not lengthen a refill")
	stricter := base
	stricter.WarmHitTarget = 0.999
	for name, s := range map[string]Sizing{"boot 60 s": longer, "target 0.999": stricter} {
		assert.Greaterf(t, at(s), at(base), "%s must need more spares than the defaults (%v)", name, at(base))
	}
	assert.Equal(t, 0.0, ArrivalsSpares(base, 0, 0, 0))
	assert.Equal(t, 3.0, ArrivalsSpares(base, 3, 0, 0))
	// The long window keeps the pool through a lull the short window no longer sees.
	assert.Greater(t, ArrivalsSpares(base, 0, 0, 60), 0.0)
}

func TestNormalQuantile(t *testing.T) {
	for p, z := range map[float64]float64{0.5: 0, 0.9: 1.2815516, 0.99: 2.3263479, 0.999: 3.0902323, 0.01: -2.3263479} {
		assert.InDeltaf(t, z, NormalQuantile(p), 1e-6, "p %v", p)
	}
	assert.Equal(t, 0, PoissonQuantile(0, 0.99))
	assert.Equal(t, 4, PoissonQuantile(1, 0.99)) // P(N<=3)=0.981, P(N<=4)=0.996
	assert.False(t, math.IsNaN(NormalQuantile(0.9999)))
}

// Rounded to whole nodes and floored by a schedule, the formula KEDA runs equals ArrivalsDesired:
// the pool fills the slots of ceil((claims + spares) / K) nodes, and a window in force raises the
// spares to its warm count.
func TestArrivalsFormulaRoundsToNodesAndHoldsTheScheduleFloor(t *testing.T) {
	s := arrivalsSizing()
	s.NodeLaunchSeconds, s.SandboxesPerNode = 30, 8
	s.Schedule = []schedule.Window{{Start: "0 8 * * *", End: "0 18 * * *", Timezone: "UTC", Warm: 6}, {Start: "0 12 * * *", End: "0 13 * * *", Timezone: "UTC", Warm: 10}}
	formula := ArrivalsFormula(s, 1)
	names := []string{ArrivalsShortTrigger, ArrivalsLongTrigger, ClaimsTriggerName, schedule.TriggerName(0), schedule.TriggerName(1)}
	env := map[string]float64{}
	for _, n := range names {
		env[n] = -1
	}
	program, err := expr.Compile(formula, expr.Env(env))
	require.NoError(t, err, formula)
	_, err = expr.Run(program, env)
	require.NoError(t, err, "KEDA's validation values must run")
	for _, r := range [][5]float64{{0, 0, 0, 0, 0}, {0, 0, 0, 6, 0}, {0, 0, 3, 6, 10}, {2, 5, 7, 0, 0}, {9, 30, 13, 6, 0}, {0, 40, 1, 0, 10}} {
		out, err := expr.Run(program, map[string]any{names[0]: r[0], names[1]: r[1], names[2]: r[2], names[3]: r[3], names[4]: r[4]})
		require.NoError(t, err)
		want := ArrivalsDesired(s, 1, r[2], r[0], r[1], max(r[3], r[4]))
		assert.Equalf(t, want, out, "short=%g long=%g claims=%g schedule=%g,%g", r[0], r[1], r[2], r[3], r[4])
		assert.Zerof(t, math.Mod(r[2]+want, 8), "claims + pool %g+%g must fill whole nodes of 8", r[2], want)
		assert.GreaterOrEqualf(t, want, max(r[3], r[4]), "the pool holds the largest window in force")
	}
	// At rest with no window in force the pool is the headroom, rounded up to a node: 8 - 0.
	assert.Equal(t, 8.0, ArrivalsDesired(s, 1, 0, 0, 0, 0))
	// 3 claims held and 6 spares needed: 9 slots, two nodes, so 13 warm.
	assert.Equal(t, 13.0, ArrivalsDesired(s, 0, 3, 0, 0, 6))
	// Broken once: rounding that forgets the held claims fills nodes with spares alone.
	broken := strings.Replace(formula, "- claims", "- 0", 1)
	p2, err := expr.Compile(broken, expr.Env(env))
	require.NoError(t, err)
	out, err := expr.Run(p2, map[string]any{names[0]: 0.0, names[1]: 0.0, names[2]: 3.0, names[3]: 6.0, names[4]: 0.0})
	require.NoError(t, err)
	assert.NotEqual(t, ArrivalsDesired(s, 0, 3, 0, 0, 6), out, "the comparison must be able to fail")
}

// Without a node launch, rounding or a schedule the formula is the one every measured figure ran
// with: the node keys add nothing to it.
func TestArrivalsFormulaWithoutNodesIsUnchanged(t *testing.T) {
	s := arrivalsSizing()
	plain := ArrivalsFormula(s, 2)
	s.SandboxesPerNode = 1
	assert.Equal(t, plain, ArrivalsFormula(s, 2))
	assert.NotContains(t, plain, ClaimsTriggerName)
	assert.NotContains(t, plain, "schedule_")
	s.NodeLaunchSeconds = 30
	assert.NotEqual(t, plain, ArrivalsFormula(s, 2), "a node launch lengthens the refill time")
	assert.Equal(t, s.BootSeconds+30, s.RefillSeconds())
}
