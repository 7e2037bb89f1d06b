package bursts

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// BenchmarkModel replays both traces on many seeds in the model (seconds, no
// cluster) and prints, per policy, its warm hits and idle cost across the
// seeds, how often no fixed size dominates it, and how often it meets the
// benchmark's goal (Goal in frontier.go): the check that a verdict holds
// beyond the published seed.
//
//	go test -C e2e -run '^$' -bench Model -benchtime 1x ./bursts
//
// BURSTS_MODEL_SEEDS=N (default 30) seeds from BURSTS_MODEL_FIRST (default 1).
func BenchmarkModel(b *testing.B) {
	seeds, first := modelSeeds(b)
	for i := 0; i < b.N; i++ {
		for _, name := range []string{replay.TraceBurst, replay.TraceDay} {
			rows := modelAcrossSeeds(name, first, seeds, ModelPolicies)
			fmt.Printf("\nmodel, %s trace, seeds %d..%d (idle: over the cheapest fixed pool reaching 99%% on the same seed)\n", name, first, first+uint64(seeds)-1)
			fmt.Println("| policy | warm hits mean | min | idle / cheapest fixed >= 99% | no fixed size dominates | goal met |")
			fmt.Println("|---|---|---|---|---|---|")
			for _, r := range rows {
				fmt.Printf("| %s | %.1f%% | %.1f%% | %.2f | %d/%d | %d/%d |\n", r.name, 100*r.warmMean, 100*r.warmMin, r.idleRatio, r.undominated, seeds, r.goalMet, seeds)
			}
		}
	}
}

// modelPlotPath is where a model benchmark writes its picture: BURSTS_PLOTS (off: nowhere), else
// the repository's docs/, and there only for the published seeds (another seed range is a
// check, not the figure).
func modelPlotPath(name string, seeds int, first uint64) (string, bool) {
	dir := os.Getenv("BURSTS_PLOTS")
	if dir == "off" || (dir == "" && (seeds != 30 || first != 1)) {
		return "", false
	}
	if dir == "" {
		dir = filepath.Join("..", "..", "docs") // go test runs in the package's directory
	}
	return filepath.Join(dir, name), true
}

// modelSeeds reads BURSTS_MODEL_SEEDS (default 30) and BURSTS_MODEL_FIRST (default 1).
func modelSeeds(b *testing.B) (int, uint64) {
	seeds, first := 30, uint64(1)
	if v := os.Getenv("BURSTS_MODEL_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BURSTS_MODEL_SEEDS=%q: want a count of seeds, at least 1", v)
		}
		seeds = n
	}
	if v := os.Getenv("BURSTS_MODEL_FIRST"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			b.Fatalf("BURSTS_MODEL_FIRST=%q: want a seed, a non-negative integer", v)
		}
		first = n
	}
	return seeds, first
}

// BenchmarkScaleDown replays both traces on many seeds in the model with the demand-following
// policies under scale-down windows from none to ten minutes: the figures behind the program's
// default window (components.DefaultScaleDownWindowSeconds).
//
//	go test -C e2e -run '^$' -bench ScaleDown -benchtime 1x ./bursts
func BenchmarkScaleDown(b *testing.B) {
	seeds, first := modelSeeds(b)
	// 15 s is left out: the HPA syncs every 15 s, so a window of one sync holds nothing back.
	windows := []int{0, 30, 60, 90, 120, 300, 600}
	traces := []string{replay.TraceBurst, replay.TraceDay}
	series := map[string][]WindowSeries{}
	for i := 0; i < b.N; i++ {
		for _, name := range traces {
			series[name] = nil
			fmt.Printf("\nmodel, %s trace, seeds %d..%d, per scale-down window: warm hits mean (min), idle over the cheapest fixed pool reaching 99%%, seeds on which no fixed size dominates\n", name, first, first+uint64(seeds)-1)
			fmt.Print("| policy |")
			for _, w := range windows {
				fmt.Printf(" %d s |", w)
			}
			fmt.Print("\n|---|")
			for range windows {
				fmt.Print("---|")
			}
			fmt.Println()
			var cells [][]string
			for _, w := range windows {
				rows := modelAcrossSeeds(name, first, seeds, func(maxReplicas int) []replay.Policy {
					var ps []replay.Policy
					for _, p := range ModelPolicies(maxReplicas) {
						if p.Name == "arrivals, L = boot+poll+sync (before)" {
							continue
						}
						p.ScaleDown = components.ScalingRules{StabilizationWindowSeconds: w}
						ps = append(ps, p)
					}
					return ps
				})
				for r, row := range rows {
					if len(cells) <= r {
						cells = append(cells, []string{row.name})
						series[name] = append(series[name], WindowSeries{Policy: row.name})
					}
					series[name][r].Points = append(series[name][r].Points, WindowPoint{WindowSeconds: w, Warm: 100 * row.warmMean, IdleRatio: row.idleRatio})
					cells[r] = append(cells[r], fmt.Sprintf("%.1f%% (%.1f%%), %.2f, %d/%d", 100*row.warmMean, 100*row.warmMin, row.idleRatio, row.undominated, seeds))
				}
			}
			for _, c := range cells {
				fmt.Printf("| %s |\n", strings.Join(c, " | "))
			}
		}
	}
	path, ok := modelPlotPath("bursts-scaledown.png", seeds, first)
	if !ok {
		return
	}
	if err := WindowPlot(path, traces, series); err != nil {
		b.Fatal(err)
	}
	fmt.Println("wrote", path)
}

// ModelPolicies are the autoscaled policies the model compares with the fixed
// sweep: those the live benchmark runs, the arrivals policy with a floor of
// the largest burst, and the arrivals policy's earlier refill time.
func ModelPolicies(maxReplicas int) []replay.Policy {
	a := DefaultArrivalsSizing()
	target, _ := strconv.ParseFloat(a.WarmHitTarget, 64)
	s := components.Sizing{Policy: components.SizingArrivals, BootSeconds: a.BootSeconds, HPASyncSeconds: a.HPASyncSeconds,
		WarmHitTarget: target, ShortWindowSeconds: a.ShortWindowSeconds, LongWindowSeconds: a.LongWindowSeconds}
	short, long := time.Duration(a.ShortWindowSeconds)*time.Second, time.Duration(a.LongWindowSeconds)*time.Second
	arrivals := func(d replay.Demand) float64 {
		return components.ArrivalsSpares(s, 0, float64(d.ArrivalsShort), float64(d.ArrivalsLong))
	}
	// The refill time before it was one boot: boot + KEDA's poll + the HPA's sync.
	before := s
	before.BootSeconds += contract.DefaultPollingInterval + a.HPASyncSeconds
	held := func(h int) func(replay.Demand) float64 {
		return func(d replay.Demand) float64 { return float64(d.Held + h) }
	}
	ps := []replay.Policy{
		{Name: "blueprint", Desired: held(0)},
		{Name: "headroom-3", Desired: held(3)},
		{Name: "headroom-5", Desired: held(5)},
		{Name: "headroom-6", Desired: held(6)},
		{Name: "arrivals", Desired: arrivals},
		{Name: "arrivals, minReplicas 6", Desired: arrivals, Floor: 6},
		{Name: "arrivals, L = boot+poll+sync (before)", Desired: func(d replay.Demand) float64 {
			return components.ArrivalsSpares(before, 0, float64(d.ArrivalsShort), float64(d.ArrivalsLong))
		}},
	}
	for i := range ps {
		ps[i].Floor = max(ps[i].Floor, 1)
		ps[i].Max, ps[i].Short, ps[i].Long = maxReplicas, short, long
	}
	return ps
}

type modelRow struct {
	name                 string
	warmMean, warmMin    float64
	idleRatio            float64 // mean over seeds
	undominated, goalMet int
}

// modelAcrossSeeds runs the fixed sweep 1..the trace's bound and every
// ModelPolicies policy on each seed, and summarises each autoscaled policy.
func modelAcrossSeeds(trace string, first uint64, seeds int, policies func(maxReplicas int) []replay.Policy) []modelRow {
	loop := replay.DefaultLoop()
	var rows []modelRow
	for n := uint64(0); n < uint64(seeds); n++ {
		seed := first + n
		tr := modelTrace(trace, seed)
		bound := traceBound(tr)
		var fixed []Point
		for size := 1; size <= bound; size++ {
			r := replay.Simulate(tr, replay.Policy{Fixed: size}, loop, seed)
			fixed = append(fixed, Point{Name: fmt.Sprintf("fixed-%d", size), Fixed: size, Warm: 100 * r.WarmShare(), Idle: r.IdleWarmPodSeconds})
		}
		cheapest, found := CheapestFixedReaching(fixed, 99)
		for i, p := range policies(bound) {
			r := replay.Simulate(tr, p, loop, seed)
			pt := Point{Name: p.Name, Warm: 100 * r.WarmShare(), Idle: r.IdleWarmPodSeconds}
			if n == 0 {
				rows = append(rows, modelRow{name: p.Name, warmMin: math.Inf(1)})
			}
			row := &rows[i]
			row.warmMean += r.WarmShare() / float64(seeds)
			row.warmMin = math.Min(row.warmMin, r.WarmShare())
			ratio := math.NaN()
			if found {
				ratio = pt.Idle / cheapest.Idle
			}
			row.idleRatio += ratio / float64(seeds)
			dominated := false
			for _, f := range fixed {
				dominated = dominated || f.Dominates(pt)
			}
			if !dominated {
				row.undominated++
			}
			if !dominated && (trace != replay.TraceDay || (pt.Warm >= 99 && ratio <= 0.6)) {
				row.goalMet++
			}
		}
	}
	return rows
}

func modelTrace(name string, seed uint64) *replay.Trace {
	var tr *replay.Trace
	var err error
	switch name {
	case replay.TraceDay:
		p := replay.DefaultDayParams()
		p.Seed = seed
		tr, err = replay.GenerateDay(p)
	case replay.TraceLoadDay:
		p := replay.DefaultLoadDayParams()
		p.Seed = seed
		tr, err = replay.GenerateLoadDay(p)
	default:
		p := replay.DefaultTraceParams()
		p.Seed = seed
		tr, err = replay.GenerateTrace(p)
	}
	if err != nil {
		panic(err) // the default params are valid: TestDefault*IsHeldToItsSeed
	}
	return tr
}

// BenchmarkScaleUp replays both traces on many seeds in the model with each autoscaled policy
// twice: under the program's scale-up (any rise in one HPA sync) and under Kubernetes' default
// (the larger of 4 pods or 100 % per 15 s, what an HPA whose scale-up names no policy runs,
// and what every live figure measured before the program named one ran with). It prints which
// rows move and by how much: where no burst outgrows max(4, the pool) in a sync, the two agree.
//
//	go test -C e2e -run '^$' -bench ScaleUp -benchtime 1x ./bursts
//
// BURSTS_MODEL_SEEDS and BURSTS_MODEL_FIRST as for BenchmarkModel.
func BenchmarkScaleUp(b *testing.B) {
	seeds, first := modelSeeds(b)
	withKubernetesScaleUp := func(maxReplicas int) []replay.Policy {
		ps := ModelPolicies(maxReplicas)
		for i := range ps {
			ps[i].KubernetesScaleUp = true
		}
		return ps
	}
	for i := 0; i < b.N; i++ {
		for _, name := range []string{replay.TraceBurst, replay.TraceDay} {
			program := modelAcrossSeeds(name, first, seeds, ModelPolicies)
			kubernetes := modelAcrossSeeds(name, first, seeds, withKubernetesScaleUp)
			fmt.Printf("\nmodel, %s trace, seeds %d..%d: the program's scale-up (one sync) against Kubernetes' default (4 pods or 100 %% per 15 s)\n", name, first, first+uint64(seeds)-1)
			fmt.Println("| policy | warm hits, one sync | Kubernetes' default | moves by | idle / cheapest fixed, one sync | Kubernetes' default | undominated, one sync | Kubernetes' default |")
			fmt.Println("|---|---|---|---|---|---|---|---|")
			for j, p := range program {
				k := kubernetes[j]
				fmt.Printf("| %s | %.1f%% | %.1f%% | %+.1f pt | %.2f | %.2f | %d/%d | %d/%d |\n", p.name, 100*p.warmMean, 100*k.warmMean,
					100*(p.warmMean-k.warmMean), p.idleRatio, k.idleRatio, p.undominated, seeds, k.undominated, seeds)
			}
		}
	}
}
