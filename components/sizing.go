package components

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// The sizing policies: how the ScaledObject turns the exporter's readings into a pool size.
const (
	// SizingClaims is the blueprint's mapping: ceil(claims held / targetValue) + headroom.
	SizingClaims = "claims"
	// SizingArrivals sizes the pool by the claims that arrive while a taken sandbox is replaced.
	SizingArrivals = "arrivals"
)

// The trigger names the arrivals formula reads (KEDA passes each trigger's value by its name).
// They equal the exporter's field names, which the triggers read as their valueLocation.
const (
	ArrivalsShortTrigger = contract.DemandArrivalsShortField
	ArrivalsLongTrigger  = contract.DemandArrivalsLongField
)

// Sizing holds the arrivals policy's parameters, all things a platform team knows or chooses.
type Sizing struct {
	Policy string
	// BootSeconds: a new sandbox's create -> Ready on the team's nodes.
	BootSeconds int
	// HPASyncSeconds: the HPA controller's sync period (15 s on EKS, not configurable there).
	// The HPA reads the arrival counts this often, so the short window must span at least one
	// sync; it does not enter the spares (see RefillSeconds).
	HPASyncSeconds int
	// WarmHitTarget: the share of claims that should find a warm sandbox, in (0.5, 1).
	WarmHitTarget float64
	// ShortWindowSeconds and LongWindowSeconds are the arrival windows the exporter counts over:
	// the short one sees a burst within a poll or two, the long one keeps the pool through gaps.
	ShortWindowSeconds int
	LongWindowSeconds  int
	// NodeLaunchSeconds: a new node's launch to Ready when no node has a free slot (0: nodes are
	// always there). A taken sandbox's replacement waits for it when the nodes are full, which a
	// pool rounded to whole nodes always is, so it is part of the refill time.
	NodeLaunchSeconds int
	// SandboxesPerNode K > 1 rounds the pool up to whole nodes: the warm sandboxes fill the slots
	// of the nodes the claims and spares need, which are paid for anyway. 1 (or 0) rounds nothing.
	SandboxesPerNode int
	// Schedule are time-of-day floors of warm sandboxes (KEDA cron triggers).
	Schedule []schedule.Window
}

// Defaults of the arrivals policy. Boot time is the local node's measured 5-6 s rounded up;
// on EKS a team should set what it measures.
const (
	DefaultBootSeconds        = 6
	DefaultHPASyncSeconds     = 15
	DefaultWarmHitTarget      = 0.99
	DefaultShortWindowSeconds = 30
	DefaultLongWindowSeconds  = 180
)

// DefaultSizing is the claims policy with the arrivals parameters' defaults filled in.
func DefaultSizing() Sizing {
	return Sizing{
		Policy: SizingClaims, BootSeconds: DefaultBootSeconds, HPASyncSeconds: DefaultHPASyncSeconds,
		WarmHitTarget: DefaultWarmHitTarget, ShortWindowSeconds: DefaultShortWindowSeconds, LongWindowSeconds: DefaultLongWindowSeconds,
		SandboxesPerNode: 1,
	}
}

// RefillSeconds is L, the time a taken warm sandbox is missing from the pool: one boot, after a
// node launch when the nodes are full. The agent-sandbox controller replaces an adopted sandbox
// as soon as it is taken, whatever the autoscaler does, so a pool whose size holds refills in
// that time; the autoscaler's reaction (an HPA sync) only delays a change of size, which matters
// when the arrival rate moves within a sync, and the long window's memory covers that. An
// earlier L of boot + pollingInterval + HPA sync (36 s by default) doubled the pool's idle cost
// for a point or two of warm hits in the model of replay/model.go over 30 seeds
// (docs/bursts.md, "The model").
func (s Sizing) RefillSeconds() int {
	return s.BootSeconds + s.NodeLaunchSeconds
}

// RoundsToNodes reports whether the pool is rounded up to whole nodes.
func (s Sizing) RoundsToNodes() bool { return s.SandboxesPerNode > 1 }

// ArrivalsFormula is the KEDA scalingModifiers formula of the arrivals policy:
//
//	m      = max(arrivals_short / short, arrivals_long / long) * L   claims expected within L
//	spares = m > 0 ? ceil(m + z*sqrt(m) + (z*z-1)/6 + 0.5) : 0         + headroom
//	spares = max(spares, schedule_0, schedule_1, ...)                  with a schedule
//	pool   = K * ceil((claims + spares) / K) - claims                  rounded to whole nodes
//
// A pool that refills one for one is an (S-1, S) base-stock inventory: the sandboxes still
// booting are Poisson with mean m whatever the boot-time distribution (Palm's theorem), so a
// claim finds a warm one with probability P(N <= S-1). S is the Poisson quantile at the
// warm-hit target, from the normal approximation with the Cornish-Fisher skew term and a
// continuity correction (ArrivalsSpares is the same in Go; a test holds both to the exact
// quantile). Each schedule window's trigger reads its warm count inside the window and 0
// outside, so the floor is the largest window in force. Rounding counts the claims held
// (claims, the exporter's active_claims): an adopted sandbox leaves the pool but keeps its
// slot. The formula starts with float( so KEDA does not wrap it again.
func ArrivalsFormula(s Sizing, headroom int) string {
	l := float64(s.RefillSeconds())
	short, long := l/float64(s.ShortWindowSeconds), l/float64(s.LongWindowSeconds)
	z := NormalQuantile(s.WarmHitTarget)
	c := (z*z-1)/6 + 0.5
	m := fmt.Sprintf("max(%s * %s, %s * %s)", ArrivalsShortTrigger, num(short), ArrivalsLongTrigger, num(long))
	spares := fmt.Sprintf("(%s > 0 ? ceil(%s + %s * %s ** 0.5 + %s) : 0) + %d", m, m, num(z), m, num(c), headroom)
	if len(s.Schedule) > 0 {
		floors := make([]string, len(s.Schedule))
		for i := range s.Schedule {
			floors[i] = schedule.TriggerName(i)
		}
		spares = fmt.Sprintf("max(%s, %s)", spares, strings.Join(floors, ", "))
	}
	if s.RoundsToNodes() {
		k := s.SandboxesPerNode
		spares = fmt.Sprintf("%d * ceil((%s + %s) / %d) - %s", k, ClaimsTriggerName, spares, k, ClaimsTriggerName)
	}
	return fmt.Sprintf("float(%s)", spares)
}

// ArrivalsSpares is the arrivals formula's spares before the schedule and the rounding,
// evaluated in Go with the constants rounded as rendered.
func ArrivalsSpares(s Sizing, headroom int, arrivalsShort, arrivalsLong float64) float64 {
	l := float64(s.RefillSeconds())
	short, long := round6(l/float64(s.ShortWindowSeconds)), round6(l/float64(s.LongWindowSeconds))
	z := round6(NormalQuantile(s.WarmHitTarget))
	c := round6((z*z-1)/6 + 0.5)
	m := math.Max(arrivalsShort*short, arrivalsLong*long)
	spares := 0.0
	if m > 0 {
		spares = math.Ceil(m + z*math.Sqrt(m) + c)
	}
	return spares + float64(headroom)
}

// ArrivalsDesired is the whole ArrivalsFormula evaluated in Go: the spares, raised to the
// schedule's floor (ScheduleFloor at the reading's time), rounded to whole nodes around the
// claims held.
func ArrivalsDesired(s Sizing, headroom int, claims, arrivalsShort, arrivalsLong, floor float64) float64 {
	spares := ArrivalsSpares(s, headroom, arrivalsShort, arrivalsLong)
	if len(s.Schedule) > 0 {
		spares = math.Max(spares, floor)
	}
	if s.RoundsToNodes() {
		k := float64(s.SandboxesPerNode)
		return k*math.Ceil((claims+spares)/k) - claims
	}
	return spares
}

// ScheduleFloor is the largest warm count of the windows in force at t (0 if none is).
func (s Sizing) ScheduleFloor(t time.Time) (float64, error) { return schedule.Floor(s.Schedule, t) }

// PoissonQuantile is the smallest k with P(N <= k) >= p for N ~ Poisson(m): the spares a pool
// needs, less one.
func PoissonQuantile(m, p float64) int {
	term := math.Exp(-m)
	cdf := term
	k := 0
	for cdf < p && k < 100000 {
		k++
		term *= m / float64(k)
		cdf += term
	}
	return k
}

// NormalQuantile is the standard normal's inverse CDF (Acklam's rational approximation,
// relative error below 1.2e-9), for p in (0, 1).
func NormalQuantile(p float64) float64 {
	a := []float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := []float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := []float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := []float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	const low = 0.02425
	switch {
	case p < low:
		q := math.Sqrt(-2 * math.Log(p))
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p <= 1-low:
		q := p - 0.5
		r := q * q
		return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
	default:
		q := math.Sqrt(-2 * math.Log(1-p))
		return -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// num renders a constant with six decimals at most, as the formula carries it.
func num(x float64) string { return strconv.FormatFloat(round6(x), 'f', -1, 64) }
