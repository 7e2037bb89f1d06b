package advisor

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The Goal's bound: the best chance any advisor has of meeting the out-of-sample Goal
// (advise/README.md) on a family.
//
// An advisor sees 14 days and recommends a setting; the Goal is judged on 30 other days, drawn
// apart from them. Whatever the advisor reads, the 30 days do not depend on it, so its chance
// of meeting the Goal is at most the chance of the best single setting, known in advance:
// max over s of P(s meets the Goal on 30 days drawn from the family). BenchmarkGoalBound
// estimates that over every setting advise searches: a pool of days replayed once per setting,
// then many draws of 30 days from the pool, each judged as runOutOfSample judges the test days.

// dayOutcome is one setting on one day of the pool.
type dayOutcome struct {
	atTarget bool
	cost     float64
}

// settingDays is one setting replayed on every day of the pool.
type settingDays struct {
	name  string
	fixed int // the fixed pool's size; 0 when autoscaled
	days  []dayOutcome
}

// A goalBar is the Goal's bar: a setting at the target on 90% of testDays days, at most band
// times the hindsight fixed pool's cost over them.
type goalBar struct {
	testDays int
	band     float64
}

// outOfSampleBar is the Goal's bar: 30 test days, at most 1.05 times the hindsight fixed pool.
var outOfSampleBar = goalBar{testDays: 30, band: 1.05}

// goalChance is a setting's share of the draws on which it meets the Goal.
type goalChance struct {
	name   string
	chance float64
}

// boundSettings are every level of every ladder advise searches on days like ds (the schedule's
// at the three headrooms advise tries, below the one plain arrivals needs on the pool).
func boundSettings(ds []*replay.Trace, p Params) []Candidate {
	peak := 0
	for _, d := range ds {
		peak = max(peak, d.Peak())
	}
	bound := searchBound(peak)
	var out []Candidate
	ls := ladders(p, bound)
	for _, l := range ls {
		for level := range l.Levels {
			out = append(out, l.At(level))
		}
	}
	if ws, ok := busyWindows(ds, p.dayClock()); ok {
		need := ninetyPercentOf(len(ds))
		for _, l := range ls {
			if l.Name != arrivalsLadderName(p) {
				continue
			}
			if h, _ := search(l, ds, p, p.loop(), need, false); h > 0 {
				for _, headroom := range uniqueInts(0, h/3, 2*h/3) {
					sl := scheduleLadder(p, bound, arrivalsSizing(p), ws, headroom)
					for level := range sl.Levels {
						out = append(out, sl.At(level))
					}
				}
			}
		}
	}
	return out
}

// replayEach replays every setting on every day (simulateDays: a day's seed is its index in the
// pool, so every setting sees the same boots on a day).
func replayEach(cs []Candidate, ds []*replay.Trace, p Params) []settingDays {
	loop := p.loop()
	out := make([]settingDays, len(cs))
	for i, c := range cs {
		out[i] = settingDays{name: c.Name, fixed: c.policy.Fixed, days: make([]dayOutcome, len(ds))}
		for d, r := range simulateDays(c, ds, loop) {
			out[i].days[d] = dayOutcome{atTarget: p.atTarget(r), cost: p.cost(r)}
		}
	}
	return out
}

// goalChances draws bar.testDays days from the pool draws times (without replacement within a
// draw) and counts, per setting, the draws on which it meets the Goal: at the target on 90% of
// the drawn days, at most bar.band times the cost of the smallest fixed pool that is (the
// hindsight pool, as runOutOfSample takes it). A draw on which no fixed pool reaches the target
// counts for no setting. The chances come back in the settings' order.
func goalChances(settings []settingDays, bar goalBar, draws int, seed uint64) []goalChance {
	testDays := bar.testDays
	pool := len(settings[0].days)
	rng := rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc908))
	need := ninetyPercentOf(testDays)
	met := make([]int, len(settings))
	at := make([]int, len(settings))
	cost := make([]float64, len(settings))
	idx := make([]int, pool)
	for i := range idx {
		idx[i] = i
	}
	for range draws {
		// the first testDays of a partial shuffle
		for i := range testDays {
			j := i + rng.IntN(pool-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		for s := range settings {
			at[s], cost[s] = 0, 0
			for _, d := range idx[:testDays] {
				o := settings[s].days[d]
				if o.atTarget {
					at[s]++
				}
				cost[s] += o.cost
			}
		}
		hindsight, size := -1, 0
		for s, st := range settings {
			if st.fixed > 0 && at[s] >= need && (hindsight < 0 || st.fixed < size) {
				hindsight, size = s, st.fixed
			}
		}
		if hindsight < 0 {
			continue
		}
		for s := range settings {
			if at[s] >= need && cost[s] <= bar.band*cost[hindsight] {
				met[s]++
			}
		}
	}
	out := make([]goalChance, len(settings))
	for s, st := range settings {
		out[s] = goalChance{name: st.name, chance: float64(met[s]) / float64(draws)}
	}
	return out
}

// A fixedRule reads a fixed pool's size from the train days: the size the k-th lowest of them
// needs (a day's need: the smallest fixed pool at the target on it), plus delta. Advise's own
// choice is near k = 13 of 14 (the days it must reach), delta 0.
type fixedRule struct{ k, delta int }

func (r fixedRule) String() string {
	return fmt.Sprintf("need ranked %d of the days, %+d", r.k, r.delta)
}

// fixedReadChances are the rules' chances of meeting the Goal (k from three quarters of the
// train days to all, delta -1..+4), over draws of trainDays then bar.testDays distinct days: the
// best a fixed pool read from the history can do.
func fixedReadChances(settings []settingDays, trainDays int, bar goalBar, draws int, seed uint64) map[fixedRule]float64 {
	testDays := bar.testDays
	bySize := map[int]settingDays{}
	for _, st := range settings {
		if st.fixed > 0 {
			bySize[st.fixed] = st
		}
	}
	pool := len(settings[0].days)
	needOf := make([]int, pool)
	for d := range needOf {
		for n := 1; n <= len(bySize); n++ {
			if st, ok := bySize[n]; ok && st.days[d].atTarget {
				needOf[d] = n
				break
			}
		}
	}
	var rules []fixedRule
	for k := (trainDays * 3) / 4; k <= trainDays; k++ {
		for delta := -1; delta <= 4; delta++ {
			rules = append(rules, fixedRule{k, delta})
		}
	}
	met := map[fixedRule]int{}
	rng := rand.New(rand.NewPCG(seed, seed^0xbb67ae8584caa73b))
	need := ninetyPercentOf(testDays)
	idx := make([]int, pool)
	for i := range idx {
		idx[i] = i
	}
	judge := func(n int, test []int) (int, float64, bool) {
		st, ok := bySize[n]
		if !ok {
			return 0, 0, false
		}
		at, cost := 0, 0.0
		for _, d := range test {
			if st.days[d].atTarget {
				at++
			}
			cost += st.days[d].cost
		}
		return at, cost, true
	}
	for range draws {
		for i := range trainDays + testDays {
			j := i + rng.IntN(pool-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		train, test := idx[:trainDays], idx[trainDays:trainDays+testDays]
		needs := make([]int, trainDays)
		for i, d := range train {
			needs[i] = needOf[d]
		}
		slices.Sort(needs)
		hindsightCost := -1.0
		for n := 1; n <= len(bySize); n++ {
			if at, cost, ok := judge(n, test); ok && at >= need {
				hindsightCost = cost
				break
			}
		}
		if hindsightCost < 0 {
			continue
		}
		for _, r := range rules {
			if needs[r.k-1] == 0 {
				continue // a train day no fixed pool reaches
			}
			if at, cost, ok := judge(needs[r.k-1]+r.delta, test); ok && at >= need && cost <= bar.band*hindsightCost {
				met[r]++
			}
		}
	}
	out := map[fixedRule]float64{}
	for _, r := range rules {
		out[r] = float64(met[r]) / float64(draws)
	}
	return out
}

// bestFixedRead is the rule with the highest chance (the lowest k, then delta, of equals).
func bestFixedRead(chances map[fixedRule]float64) (fixedRule, float64) {
	rules := slices.SortedFunc(maps.Keys(chances), func(a, b fixedRule) int {
		if a.k != b.k {
			return a.k - b.k
		}
		return a.delta - b.delta
	})
	var top fixedRule
	topChance := -1.0
	for _, r := range rules {
		if chances[r] > topChance {
			top, topChance = r, chances[r]
		}
	}
	return top, topChance
}

// best is the setting with the highest chance, among those fixed or not as the filter says.
func best(settings []settingDays, chances []goalChance, keep func(settingDays) bool) goalChance {
	var b goalChance
	for s, c := range chances {
		if keep(settings[s]) && c.chance > b.chance {
			b = c
		}
	}
	return b
}

// BenchmarkGoalBound prints, per family, the best chance any setting known in advance has of
// meeting the out-of-sample Goal on 30 days, and so any advisor, and the chance of the best fixed one:
//
//	go test -run '^$' -bench '^BenchmarkGoalBound$' -benchtime 1x -timeout 60m ./advise/advisor
//
// ADVISE_BOUND_DAYS sets the pool of days per family (300), ADVISE_BOUND_SEED its first seed
// (500001), ADVISE_BOUND_DRAWS the draws (4000); ADVISE_BOUND_BAND and ADVISE_BOUND_TEST_DAYS
// move the bar (1.05, 30 days) to see what another Goal would allow, ADVISE_BOUND_FAMILIES
// (names, comma-separated) runs only those.
func BenchmarkGoalBound(b *testing.B) {
	poolDays := int(envSeed(b, "ADVISE_BOUND_DAYS", 300))
	first := envSeed(b, "ADVISE_BOUND_SEED", 500001)
	draws := int(envSeed(b, "ADVISE_BOUND_DRAWS", 4000))
	bar := outOfSampleBar
	bar.testDays = int(envSeed(b, "ADVISE_BOUND_TEST_DAYS", uint64(bar.testDays)))
	if v := os.Getenv("ADVISE_BOUND_BAND"); v != "" {
		band, err := strconv.ParseFloat(v, 64)
		if err != nil || band < 1 {
			b.Fatalf("ADVISE_BOUND_BAND=%q: want a cost ratio of at least 1, e.g. 1.10", v)
		}
		bar.band = band
	}
	only := os.Getenv("ADVISE_BOUND_FAMILIES")
	for i := 0; i < b.N; i++ {
		fmt.Printf("%d days per family (seeds %d..), %d draws of %d days, band %.2f; every level of every ladder advise searches\n", poolDays, first, draws, bar.testDays, bar.band)
		fmt.Println("| family | the best setting, known in advance | its chance | the best fixed pool | its chance | a fixed pool read from 14 days: the best rule | its chance |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, f := range families {
			if only != "" && !slices.Contains(strings.Split(only, ","), f.name) {
				continue
			}
			ds := daysOf(f, first, poolDays)
			p := DefaultParams()
			p.Day = ds[0].Duration
			settings := replayEach(boundSettings(ds, p), ds, p)
			chances := goalChances(settings, bar, draws, 1)
			all := best(settings, chances, func(settingDays) bool { return true })
			fix := best(settings, chances, func(s settingDays) bool { return s.fixed > 0 })
			rule, ruleChance := bestFixedRead(fixedReadChances(settings, 14, bar, draws, 2))
			fmt.Printf("| %s | %s | %.2f | %s | %.2f | %s | %.2f |\n", f.name, all.name, all.chance, fix.name, fix.chance, rule, ruleChance)
		}
	}
}

// daysOfOutcome is a setting over a pool of days: at the target on the first atTarget of them,
// each day costing cost.
func daysOfOutcome(name string, fixed, days, atTarget int, cost float64) settingDays {
	s := settingDays{name: name, fixed: fixed, days: make([]dayOutcome, days)}
	for d := range s.days {
		s.days[d] = dayOutcome{atTarget: d < atTarget, cost: cost}
	}
	return s
}

// A draw of every day of the pool is judged as runOutOfSample judges test days: the hindsight
// pool is the smallest fixed one at the target on 9 of 10 days, and a setting meets the Goal at
// the target on 9 and at most 1.05 times its cost.
func TestGoalChancesJudgeADrawAsTheGoalDoes(t *testing.T) {
	const days = 10
	settings := []settingDays{
		daysOfOutcome("fixed-1", 1, days, 8, 5),   // misses on 2 days: not the hindsight
		daysOfOutcome("fixed-2", 2, days, 10, 10), // the hindsight: 100 over the draw
		daysOfOutcome("fixed-3", 3, days, 10, 12), // at the target, 1.2 times the cost
		daysOfOutcome("A", 0, days, 9, 10.4),      // 9 of 10 at 1.04: met
		daysOfOutcome("B", 0, days, 10, 10.6),     // 1.06: not met
		daysOfOutcome("C", 0, days, 8, 5),         // cheap, but 8 of 10: not met
	}
	got := map[string]float64{}
	for _, c := range goalChances(settings, goalBar{days, 1.05}, 50, 1) {
		got[c.name] = c.chance
	}
	assert.Equal(t, map[string]float64{"fixed-1": 0, "fixed-2": 1, "fixed-3": 0, "A": 1, "B": 0, "C": 0}, got)

	// no fixed pool at the target: no hindsight, and no setting meets the Goal
	settings[1] = daysOfOutcome("fixed-2", 2, days, 7, 10)
	settings[2] = daysOfOutcome("fixed-3", 3, days, 8, 12)
	for _, c := range goalChances(settings, goalBar{days, 1.05}, 50, 1) {
		assert.Zero(t, c.chance, "%s meets the Goal with no fixed pool at the target", c.name)
	}
}

// A draw is testDays distinct days of the pool: a setting at the target on all but 2 of 12
// days meets the 9-of-10 bar on exactly the draws that leave out at least one of those 2.
func TestGoalChancesDrawDistinctDays(t *testing.T) {
	settings := []settingDays{
		daysOfOutcome("fixed-5", 5, 12, 12, 1),
		daysOfOutcome("A", 0, 12, 10, 1),
	}
	chances := goalChances(settings, goalBar{10, 1.05}, 20000, 7)
	// both misses drawn: (10*9)/(12*11) of the draws
	assert.InDelta(t, 1-90.0/132, chances[1].chance, 0.015)
	assert.Equal(t, 1.0, chances[0].chance)
}

// A fixed pool read from the train days: when every day needs 3, the size the days need meets
// the Goal on every draw and one more never does (4 costs over 1.05 times 3's); when no fixed
// pool reaches the target, no rule does.
func TestFixedReadJudgesTheSizeItReads(t *testing.T) {
	const days = 60
	var settings []settingDays
	for n := 1; n <= 6; n++ {
		at := 0
		if n >= 3 {
			at = days
		}
		settings = append(settings, daysOfOutcome(fmt.Sprintf("fixed-%d", n), n, days, at, float64(n)))
	}
	chances := fixedReadChances(settings, 14, outOfSampleBar, 200, 1)
	for k := 10; k <= 14; k++ {
		assert.Equal(t, 1.0, chances[fixedRule{k, 0}], "rule %v", fixedRule{k, 0})
		assert.Zero(t, chances[fixedRule{k, 1}], "rule %v", fixedRule{k, 1})
		assert.Zero(t, chances[fixedRule{k, -1}], "rule %v", fixedRule{k, -1})
	}
	best, chance := bestFixedRead(chances)
	assert.Equal(t, fixedRule{10, 0}, best)
	assert.Equal(t, 1.0, chance)

	for i := range settings {
		settings[i] = daysOfOutcome(settings[i].name, i+1, days, 0, float64(i+1))
	}
	for r, c := range fixedReadChances(settings, 14, outOfSampleBar, 200, 1) {
		assert.Zero(t, c, "rule %v with no fixed pool at the target", r)
	}
}
