package bursts

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Point is one policy on the trade-off plane: its warm-hit share (percent)
// against its idle warm-pod-seconds (the cost of warm capacity nobody used).
type Point struct {
	Name  string
	Fixed int // > 0: a fixed pool of that size
	Warm  float64
	Idle  float64
}

// PointOf places a result on the plane.
func PointOf(r Result) Point {
	return Point{Name: r.Policy.Name, Fixed: r.Policy.Fixed, Warm: r.WarmShare(), Idle: r.IdleWarm}
}

// Dominates reports whether a is better than b on both axes: a strictly
// higher warm-hit share and strictly lower idle cost (the goal's wording: no
// fixed size has both a higher warm-hit share and a lower idle cost).
func (a Point) Dominates(b Point) bool { return a.Warm > b.Warm && a.Idle < b.Idle }

// Frontier is the fixed pools' frontier: the fixed pools that no other fixed
// pool beats (another with at least the warm-hit share for at most the idle
// cost, better on one of them), by idle cost ascending. A larger pool that
// measured fewer warm hits than a smaller one (noise at the top) drops out.
func Frontier(points []Point) []Point {
	var fixed []Point
	for _, p := range points {
		if p.Fixed > 0 {
			fixed = append(fixed, p)
		}
	}
	var out []Point
	for _, p := range fixed {
		beaten := false
		for _, q := range fixed {
			if q.Warm >= p.Warm && q.Idle <= p.Idle && (q.Warm > p.Warm || q.Idle < p.Idle) {
				beaten = true
				break
			}
		}
		if !beaten {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Idle != out[j].Idle {
			return out[i].Idle < out[j].Idle
		}
		return out[i].Fixed < out[j].Fixed
	})
	return out
}

// CheapestFixedReaching is the fixed pool with the lowest idle cost whose
// warm-hit share is at least share percent.
func CheapestFixedReaching(points []Point, share float64) (Point, bool) {
	var best Point
	found := false
	for _, p := range points {
		if p.Fixed > 0 && p.Warm >= share && (!found || p.Idle < best.Idle) {
			best, found = p, true
		}
	}
	return best, found
}

// FrontierVerdict is one policy against the fixed pools of the same run.
type FrontierVerdict struct {
	Point
	// DominatedBy names the fixed pools with a higher warm-hit share and a
	// lower idle cost, smallest first.
	DominatedBy []string
	// Ratio is the policy's idle cost over that of Reference, the cheapest
	// fixed pool reaching the target share; HasRatio false when no fixed
	// pool reached it (the sweep then cannot say).
	Reference string
	Ratio     float64
	HasRatio  bool
}

// Verdicts judges every policy against the run's fixed pools: which fixed
// sizes dominate it, and its idle cost as a share of the cheapest fixed pool
// reaching target percent warm hits.
func Verdicts(points []Point, target float64) []FrontierVerdict {
	ref, hasRef := CheapestFixedReaching(points, target)
	var out []FrontierVerdict
	for _, p := range points {
		v := FrontierVerdict{Point: p}
		var by []Point
		for _, q := range points {
			if q.Fixed > 0 && q.Dominates(p) {
				by = append(by, q)
			}
		}
		sort.SliceStable(by, func(i, j int) bool { return by[i].Fixed < by[j].Fixed })
		for _, q := range by {
			v.DominatedBy = append(v.DominatedBy, q.Name)
		}
		if hasRef {
			v.Reference = ref.Name
			if ref.Idle > 0 {
				v.Ratio, v.HasRatio = p.Idle/ref.Idle, true
			} else if p.Idle == 0 {
				v.Ratio, v.HasRatio = 1, true
			} else {
				v.Ratio, v.HasRatio = math.Inf(1), true
			}
		}
		out = append(out, v)
	}
	return out
}

// Goal is what the benchmark asks of the recommended policy: on every trace not
// dominated by any fixed size; on the day trace also at least GoalShare
// warm hits at no more than GoalRatio of the idle cost of the cheapest fixed
// pool reaching GoalShare.
const (
	GoalShare = 99.0
	GoalRatio = 0.60
)

// MeetsGoal says whether v meets the goal on a trace (withRatio: the day
// trace, where the cost ratio counts too), and why in one line.
func MeetsGoal(v FrontierVerdict, withRatio bool) (bool, string) {
	var why []string
	ok := true
	if len(v.DominatedBy) > 0 {
		ok = false
		why = append(why, "dominated by "+strings.Join(v.DominatedBy, ", "))
	} else {
		why = append(why, "not dominated by any fixed size")
	}
	if withRatio {
		if v.Warm < GoalShare {
			ok = false
			why = append(why, fmt.Sprintf("warm hits %.1f%% < %.0f%%", v.Warm, GoalShare))
		} else {
			why = append(why, fmt.Sprintf("warm hits %.1f%% >= %.0f%%", v.Warm, GoalShare))
		}
		switch {
		case !v.HasRatio:
			ok = false
			why = append(why, fmt.Sprintf("no fixed pool reached %.0f%%: the sweep cannot give the cost ratio (widen it)", GoalShare))
		case v.Ratio > GoalRatio:
			ok = false
			why = append(why, fmt.Sprintf("idle cost %.1f%% of %s's > %.0f%%", 100*v.Ratio, v.Reference, 100*GoalRatio))
		default:
			why = append(why, fmt.Sprintf("idle cost %.1f%% of %s's <= %.0f%%", 100*v.Ratio, v.Reference, 100*GoalRatio))
		}
	}
	return ok, v.Name + ": " + strings.Join(why, "; ")
}

// Recommend picks the policy the run recommends: the named one when name is
// set (and measured); otherwise, among the autoscaled policies no fixed size
// dominates, the cheapest reaching GoalShare warm hits, or failing that the
// one with the most warm hits (then the cheapest). ok is false when there is
// no autoscaled policy at all.
func Recommend(vs []FrontierVerdict, name string) (FrontierVerdict, bool) {
	if name != "" {
		for _, v := range vs {
			if v.Name == name {
				return v, true
			}
		}
		return FrontierVerdict{}, false
	}
	var cands []FrontierVerdict
	for _, v := range vs {
		if v.Fixed == 0 && len(v.DominatedBy) == 0 {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		for _, v := range vs {
			if v.Fixed == 0 {
				cands = append(cands, v)
			}
		}
	}
	if len(cands) == 0 {
		return FrontierVerdict{}, false
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		aOK, bOK := a.Warm >= GoalShare, b.Warm >= GoalShare
		switch {
		case aOK != bOK:
			return aOK
		case aOK && a.Idle != b.Idle:
			return a.Idle < b.Idle
		case !aOK && a.Warm != b.Warm:
			return a.Warm > b.Warm
		}
		return a.Idle < b.Idle
	})
	return cands[0], true
}

// VerdictTable is the Markdown table of the verdicts: for each policy the
// fixed sizes that dominate it and its idle cost against the cheapest fixed
// pool reaching target percent warm hits.
func VerdictTable(vs []FrontierVerdict, target float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| policy | warm hits | idle warm-pod-s | dominated by (higher warm hits, lower idle) | idle vs cheapest fixed pool at >= %.0f%% |\n", target)
	b.WriteString("|---|---|---|---|---|\n")
	for _, v := range vs {
		dom := "none"
		if len(v.DominatedBy) > 0 {
			dom = strings.Join(v.DominatedBy, ", ")
		}
		ratio := fmt.Sprintf("no fixed pool reached %.0f%%", target)
		if v.HasRatio {
			ratio = fmt.Sprintf("%.0f%% of %s", 100*v.Ratio, v.Reference)
		}
		fmt.Fprintf(&b, "| %s | %.1f%% | %.0f | %s | %s |\n", v.Name, v.Warm, v.Idle, dom, ratio)
	}
	return b.String()
}
