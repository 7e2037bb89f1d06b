package bursts

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// A hand-made run: fixed pools whose warm hits rise with their size (but for
// fixed-8, which measured fewer than fixed-6: noise), and four autoscaled
// policies placed on either side of the frontier.
func handMadePoints() []Point {
	return []Point{
		{Name: "fixed-1", Fixed: 1, Warm: 20, Idle: 500},
		{Name: "fixed-4", Fixed: 4, Warm: 80, Idle: 2000},
		{Name: "fixed-6", Fixed: 6, Warm: 97, Idle: 3000},
		{Name: "fixed-8", Fixed: 8, Warm: 96, Idle: 4000},   // beaten by fixed-6: off the frontier
		{Name: "fixed-10", Fixed: 10, Warm: 99, Idle: 5000}, // cheapest at >= 99%
		{Name: "fixed-20", Fixed: 20, Warm: 100, Idle: 10000},
		{Name: "good", Warm: 99.5, Idle: 2500},    // above the frontier: nothing dominates it
		{Name: "dominated", Warm: 90, Idle: 3500}, // fixed-6 has more hits for less
		{Name: "pricey", Warm: 99, Idle: 6000},    // fixed-20 has more hits but costs more; fixed-10 ties the hits: not dominated
		{Name: "weak", Warm: 50, Idle: 4500},      // fixed-4, fixed-6, fixed-8 dominate it
	}
}

func names(ps []Point) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestFrontierKeepsOnlyUnbeatenFixedPoolsByCost(t *testing.T) {
	got := names(Frontier(handMadePoints()))
	want := []string{"fixed-1", "fixed-4", "fixed-6", "fixed-10", "fixed-20"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("frontier %v, want %v (autoscaled points and the beaten fixed-8 left out, by idle cost)", got, want)
	}
	// Reject: a frontier with equal points keeps both only if neither is better.
	tie := Frontier([]Point{{Name: "a", Fixed: 2, Warm: 50, Idle: 100}, {Name: "b", Fixed: 3, Warm: 50, Idle: 100}, {Name: "c", Fixed: 4, Warm: 50, Idle: 101}})
	if got := names(tie); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("ties: frontier %v, want [a b] (c costs more for the same hits)", got)
	}
	if len(Frontier([]Point{{Name: "auto", Warm: 99, Idle: 1}})) != 0 {
		t.Fatal("a run without fixed pools has no frontier")
	}
}

func TestVerdictsNameTheFixedSizesThatDominate(t *testing.T) {
	vs := Verdicts(handMadePoints(), GoalShare)
	by := map[string]FrontierVerdict{}
	for _, v := range vs {
		by[v.Name] = v
	}
	for name, want := range map[string][]string{
		"good":      nil,
		"dominated": {"fixed-6"},
		"pricey":    nil, // equal warm hits are not higher: fixed-10 does not dominate it
		"weak":      {"fixed-4", "fixed-6", "fixed-8"},
		"fixed-8":   {"fixed-6"}, // a fixed pool can be dominated too
	} {
		if got := by[name].DominatedBy; !reflect.DeepEqual(got, want) {
			t.Errorf("%s dominated by %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]float64{"good": 0.5, "pricey": 1.2, "fixed-10": 1, "fixed-1": 0.1} {
		v := by[name]
		if !v.HasRatio || v.Reference != "fixed-10" || math.Abs(v.Ratio-want) > 1e-9 {
			t.Errorf("%s: ratio %v (has %v) against %q, want %v against fixed-10", name, v.Ratio, v.HasRatio, v.Reference, want)
		}
	}
	// No fixed pool at the target: no ratio, and the goal says why.
	none := Verdicts([]Point{{Name: "fixed-2", Fixed: 2, Warm: 90, Idle: 100}, {Name: "auto", Warm: 99.5, Idle: 50}}, GoalShare)
	if none[1].HasRatio {
		t.Fatalf("a ratio against no reference: %+v", none[1])
	}
	if ok, msg := MeetsGoal(none[1], true); ok || !strings.Contains(msg, "widen it") {
		t.Fatalf("goal without a reference: %v %q", ok, msg)
	}
}

func TestCheapestFixedReaching(t *testing.T) {
	p, ok := CheapestFixedReaching(handMadePoints(), 99)
	if !ok || p.Name != "fixed-10" {
		t.Fatalf("cheapest fixed at 99%%: %v %v, want fixed-10 (good reaches 99.5%% for less, but is not fixed)", p.Name, ok)
	}
	if _, ok := CheapestFixedReaching(handMadePoints(), 100.1); ok {
		t.Fatal("no fixed pool reaches 100.1%")
	}
}

func TestMeetsGoalAcceptsAndRejects(t *testing.T) {
	vs := Verdicts(handMadePoints(), GoalShare)
	by := map[string]FrontierVerdict{}
	for _, v := range vs {
		by[v.Name] = v
	}
	for _, c := range []struct {
		name      string
		withRatio bool
		want      bool
		says      string
	}{
		{"good", true, true, "idle cost 50.0% of fixed-10's <= 60%"},
		{"good", false, true, "not dominated"},
		{"pricey", false, true, "not dominated"},                        // the burst trace: domination only
		{"pricey", true, false, "idle cost 120.0% of fixed-10's > 60%"}, // the day trace: the ratio too
		{"dominated", false, false, "dominated by fixed-6"},
		{"weak", true, false, "warm hits 50.0% < 99%"},
	} {
		ok, msg := MeetsGoal(by[c.name], c.withRatio)
		if ok != c.want || !strings.Contains(msg, c.says) {
			t.Errorf("%s (ratio %v): %v %q; want %v saying %q", c.name, c.withRatio, ok, msg, c.want, c.says)
		}
	}
	// The boundary: exactly 99% at exactly 60% meets it; a hair over does not.
	edge := FrontierVerdict{Point: Point{Name: "edge", Warm: 99, Idle: 600}, Reference: "fixed-x", Ratio: 0.6, HasRatio: true}
	if ok, msg := MeetsGoal(edge, true); !ok {
		t.Errorf("the boundary is inside the goal: %s", msg)
	}
	edge.Ratio = 0.6001
	if ok, _ := MeetsGoal(edge, true); ok {
		t.Error("60.01% of the reference accepted")
	}
}

func TestRecommendPicksTheCheapestUndominatedAtTheTarget(t *testing.T) {
	vs := Verdicts(handMadePoints(), GoalShare)
	if r, ok := Recommend(vs, ""); !ok || r.Name != "good" {
		t.Fatalf("recommended %q, want good (undominated, >= 99%%, cheaper than pricey)", r.Name)
	}
	if r, ok := Recommend(vs, "pricey"); !ok || r.Name != "pricey" {
		t.Fatalf("a named policy: %q %v", r.Name, ok)
	}
	if _, ok := Recommend(vs, "absent"); ok {
		t.Fatal("an unmeasured name recommended")
	}
	// Nothing at the target: the most warm hits among the undominated.
	low := Verdicts([]Point{{Name: "fixed-5", Fixed: 5, Warm: 95, Idle: 1000}, {Name: "a", Warm: 96, Idle: 1500}, {Name: "b", Warm: 97, Idle: 2000}, {Name: "c", Warm: 90, Idle: 900}}, GoalShare)
	if r, _ := Recommend(low, ""); r.Name != "b" {
		t.Fatalf("recommended %q, want b (the most warm hits; none reached 99%%)", r.Name)
	}
	if _, ok := Recommend(Verdicts([]Point{{Name: "fixed-5", Fixed: 5}}, GoalShare), ""); ok {
		t.Fatal("a run without autoscaled policies recommended one")
	}
}

func TestVerdictTableHasARowPerPolicy(t *testing.T) {
	table := VerdictTable(Verdicts(handMadePoints(), GoalShare), GoalShare)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2+len(handMadePoints()) {
		t.Fatalf("want header, separator and %d rows:\n%s", len(handMadePoints()), table)
	}
	if !strings.Contains(table, "| weak | 50.0% | 4500 | fixed-4, fixed-6, fixed-8 | 90% of fixed-10 |") {
		t.Errorf("the weak row:\n%s", table)
	}
	if !strings.Contains(table, "| good | 99.5% | 2500 | none | 50% of fixed-10 |") {
		t.Errorf("the good row:\n%s", table)
	}
}
