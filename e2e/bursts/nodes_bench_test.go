package bursts

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// BenchmarkNodes replays the three trace families on many seeds in the model with nodes (seconds,
// no cluster) and prints, per policy, its warm hits, its claims' waits and its node cost against
// the fixed pools', for EKS Auto Mode as the model takes it (K = 8, D = 45 s, consolidateAfter 30 s,
// Karpenter's 1 s / 10 s batch window) and for nodes always there (K unbounded, D = 0; cost is
// then idle warm pod-seconds, as in BenchmarkModel). It draws the Goal setting's plane on seeds
// 1..30 (docs/bursts-nodes.png; BURSTS_PLOTS=dir elsewhere, off for none).
//
//	go test -C e2e -run '^$' -bench '^BenchmarkNodes$' -benchtime 1x ./bursts
//
// BURSTS_MODEL_SEEDS=N (default 30) seeds from BURSTS_MODEL_FIRST (default 1).
func BenchmarkNodes(b *testing.B) {
	seeds, first := modelSeeds(b)
	traces := []string{replay.TraceBurst, replay.TraceDay, replay.TraceLoadDay}
	settings := []struct {
		name  string
		nodes replay.Nodes
	}{
		{"K=8, D=45 s, consolidateAfter 30 s (EKS Auto Mode as modelled)", replay.GoalNodes()},
		{"K unbounded, D=0 (nodes always there: today's model)", replay.Nodes{}},
	}
	planes := map[string][]Point{}
	for i := 0; i < b.N; i++ {
		for si, s := range settings {
			for _, name := range traces {
				rows, cheapest := nodesAcrossSeeds(name, first, seeds, s.nodes)
				cost := "node-s"
				if s.nodes.SlotsPerNode == 0 {
					cost = "idle warm pod-s"
				}
				fmt.Printf("\nnodes model, %s trace, seeds %d..%d, %s; cost: %s; the cheapest fixed pool reaching 99%% on a seed: size %s\n",
					name, first, first+uint64(seeds)-1, s.name, cost, cheapest)
				fmt.Printf("| policy | warm hits mean | min | seeds >= 99%% | claim wait p50 | p95 | p99 | node-s | idle node-s | idle warm pod-s | cost / cheapest fixed >= 99%% | idle node-s / its | cost / fixed chosen in advance | no fixed size dominates |\n")
				fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
				for _, r := range rows {
					fmt.Printf("| %s | %.1f%% | %.1f%% | %d/%d | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %s |\n", r.name, 100*r.warmMean, 100*r.warmMin,
						r.reached, seeds, waitSecs(r.p50), waitSecs(r.p95), waitSecs(r.p99), nodeCell(r.nodeSeconds, s.nodes), nodeCell(r.idleNodeSeconds, s.nodes),
						r.idleWarm, costRatioCell(r.costRatio), idleRatioCell(r.idleNodeRatio, s.nodes), costRatioCell(r.advanceRatio), dominanceCell(r))
				}
				if si == 0 {
					for _, r := range rows[:len(nodesFixedRows)-1] { // the bound's row is many sizes: left out
						planes[name] = append(planes[name], Point{Name: r.name, Fixed: r.fixed, Warm: 100 * r.warmMean, Idle: r.nodeSeconds})
					}
					for _, r := range rows[len(nodesFixedRows):] {
						planes[name] = append(planes[name], Point{Name: r.name, Warm: 100 * r.warmMean, Idle: r.nodeSeconds})
					}
				}
			}
		}
	}
	path, ok := modelPlotPath("bursts-nodes.png", seeds, first)
	if !ok {
		return
	}
	if err := NodePlot(path, traces, planes); err != nil {
		b.Fatal(err)
	}
	fmt.Println("wrote", path)
}

func waitSecs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func nodeCell(v float64, n replay.Nodes) string {
	if n.SlotsPerNode == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func costRatioCell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func idleRatioCell(v float64, n replay.Nodes) string {
	if n.SlotsPerNode == 0 {
		return "-"
	}
	return costRatioCell(v)
}

func dominanceCell(r nodesRow) string {
	if r.fixed > 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.undominated, r.seeds)
}

// maxAdvanceSize bounds the fixed sizes considered for the one chosen in advance.
const maxAdvanceSize = 40

// nodesFixedRows are the fixed sizes printed (every size from 1 to the trace's bound is
// simulated, for the cheapest and the dominance); 0 is the bound itself.
var nodesFixedRows = []int{1, 2, 4, 6, 8, 10, 12, 15, 20, 0}

type nodesRow struct {
	name                         string
	fixed                        int // > 0 a fixed size (the bound's row: its mean)
	seeds                        int
	warmMean, warmMin            float64
	reached                      int // seeds at >= 99% warm hits
	waits                        []time.Duration
	p50, p95, p99                time.Duration // over every claim of every seed
	nodeSeconds, idleNodeSeconds float64       // means over seeds
	idleWarm                     float64
	costRatio                    float64 // mean over seeds of cost / the cheapest fixed >= 99%'s
	idleNodeRatio                float64 // mean over seeds of idle node-s / that pool's
	cost                         float64 // mean over seeds
	advanceRatio                 float64 // cost / the fixed size chosen in advance's (NaN: none)
	undominated                  int
}

// nodesAcrossSeeds runs, per seed, every fixed size 1..the trace's bound and every ModelPolicies
// and NodeAwarePolicies policy with nodes, and summarises the printed fixed sizes and every autoscaled policy. Cost is
// node-seconds, or idle warm pod-seconds when nodes are unbounded. It also says the range of
// sizes of the cheapest fixed pool reaching 99%.
func nodesAcrossSeeds(trace string, first uint64, seeds int, nodes replay.Nodes) ([]nodesRow, string) {
	loop := replay.DefaultLoop()
	loop.Nodes = nodes
	costOf := func(r replay.Result) float64 {
		if nodes.SlotsPerNode == 0 {
			return r.IdleWarmPodSeconds
		}
		return r.NodeSeconds
	}
	var rows []nodesRow
	minSize, maxSize, sumSize, found := math.MaxInt, 0, 0, 0
	// Each fixed size 1..maxAdvanceSize over all the seeds: the one a team would pick before the
	// day is the smallest reaching 99% on 90% of them.
	advance := make([]struct {
		reached    int
		warm, cost float64
	}, maxAdvanceSize+1)
	for n := 0; n < seeds; n++ {
		seed := first + uint64(n)
		tr := modelTrace(trace, seed)
		bound := traceBound(tr)
		fixed := map[int]replay.Result{}
		var points []Point
		for size := 1; size <= max(bound, maxAdvanceSize); size++ {
			r := replay.Simulate(tr, replay.Policy{Fixed: size}, loop, seed)
			fixed[size] = r
			if size <= maxAdvanceSize {
				if 100*r.WarmShare() >= 99 {
					advance[size].reached++
				}
				advance[size].warm += r.WarmShare() / float64(seeds)
				advance[size].cost += costOf(r) / float64(seeds)
			}
			if size <= bound {
				points = append(points, Point{Name: fmt.Sprintf("fixed-%d", size), Fixed: size, Warm: 100 * r.WarmShare(), Idle: costOf(r)})
			}
		}
		cheapest, ok := CheapestFixedReaching(points, 99)
		if ok {
			found++
			minSize, maxSize, sumSize = min(minSize, cheapest.Fixed), max(maxSize, cheapest.Fixed), sumSize+cheapest.Fixed
		}
		type named struct {
			name  string
			fixed int
			r     replay.Result
		}
		var all []named
		for _, size := range nodesFixedRows {
			if size == 0 {
				all = append(all, named{"fixed at the bound (the peak rounded up to 5)", bound, fixed[bound]})
				continue
			}
			all = append(all, named{fmt.Sprintf("fixed-%d", size), size, fixed[size]})
		}
		for _, p := range append(ModelPolicies(bound), NodeAwarePolicies(trace, bound, nodes)...) {
			all = append(all, named{p.Name, 0, replay.Simulate(tr, p, loop, seed)})
		}
		for i, x := range all {
			if n == 0 {
				rows = append(rows, nodesRow{name: x.name, fixed: x.fixed, seeds: seeds, warmMin: math.Inf(1), advanceRatio: math.NaN()})
			}
			row := &rows[i]
			w := x.r.WarmShare()
			row.warmMean += w / float64(seeds)
			row.warmMin = math.Min(row.warmMin, w)
			if 100*w >= 99 {
				row.reached++
			}
			row.waits = append(row.waits, x.r.Waits...)
			row.cost += costOf(x.r) / float64(seeds)
			row.nodeSeconds += x.r.NodeSeconds / float64(seeds)
			row.idleNodeSeconds += x.r.IdleNodeSeconds / float64(seeds)
			row.idleWarm += x.r.IdleWarmPodSeconds / float64(seeds)
			r := math.NaN()
			if ok {
				r = costOf(x.r) / cheapest.Idle
			}
			row.costRatio += r / float64(seeds)
			ir := math.NaN()
			if ok {
				ir = x.r.IdleNodeSeconds / fixed[cheapest.Fixed].IdleNodeSeconds
			}
			row.idleNodeRatio += ir / float64(seeds)
			pt := Point{Warm: 100 * w, Idle: costOf(x.r)}
			dominated := false
			for _, f := range points {
				dominated = dominated || f.Dominates(pt)
			}
			if !dominated {
				row.undominated++
			}
		}
	}
	for i := range rows {
		rows[i].p50, rows[i].p95, rows[i].p99 = replay.Percentile(rows[i].waits, 50), replay.Percentile(rows[i].waits, 95), replay.Percentile(rows[i].waits, 99)
		rows[i].waits = nil
	}
	what := "none reached 99%"
	if found > 0 {
		what = fmt.Sprintf("%d..%d, mean %.1f (%d of %d seeds)", minSize, maxSize, float64(sumSize)/float64(found), found, seeds)
	}
	chosen := fmt.Sprintf("no fixed size up to %d reaches 99%% on 90%% of the seeds", maxAdvanceSize)
	for size := 1; size <= maxAdvanceSize; size++ {
		if a := advance[size]; 10*a.reached >= 9*seeds {
			chosen = fmt.Sprintf("the fixed size chosen in advance (the smallest at >= 99%% on 90%% of the seeds): %d, %d/%d seeds, warm hits mean %.1f%%, cost mean %.0f",
				size, a.reached, seeds, 100*a.warm, a.cost)
			for i := range rows {
				rows[i].advanceRatio = rows[i].cost / a.cost
			}
			break
		}
	}
	what += "; " + chosen
	return rows, what
}

// NodeAwarePolicies are the arrivals policy as a team on Karpenter's nodes sets it
// (sandboxesPerNode, schedule, nodeLaunchSeconds), each evaluated by replay.ArrivalsDesired,
// the formula the program renders:
//   - rounded to whole nodes of K (sandboxesPerNode K): the warm sandboxes fill the slots of the
//     nodes the claims and spares need, which are paid for anyway;
//   - the same with a schedule on the two day families: K warm (one node) through the day part
//     of the trace (the model's clock: its middle 1-NightFraction; on a real day a cron window
//     such as 08:00-20:00);
//   - the same with the whole node launch in the refill (nodeLaunchSeconds = Karpenter's longest
//     batch window + D): on nodes rounded full, a taken sandbox's replacement waits for a node.
//
// None when nodes are unbounded: there is no K to round to and no launch.
func NodeAwarePolicies(trace string, maxReplicas int, nodes replay.Nodes) []replay.Policy {
	if nodes.SlotsPerNode == 0 {
		return nil
	}
	a := DefaultArrivalsSizing()
	target, _ := strconv.ParseFloat(a.WarmHitTarget, 64)
	k := nodes.SlotsPerNode
	rounded := components.Sizing{Policy: components.SizingArrivals, BootSeconds: a.BootSeconds, HPASyncSeconds: a.HPASyncSeconds,
		WarmHitTarget: target, ShortWindowSeconds: a.ShortWindowSeconds, LongWindowSeconds: a.LongWindowSeconds, SandboxesPerNode: k}
	day := replay.DefaultDayParams()
	dayStart := time.Duration(day.NightFraction / 2 * float64(day.Duration))
	dayEnd := day.Duration - dayStart
	policy := func(name string, s components.Sizing) replay.Policy {
		return replay.Policy{Name: name, Desired: func(d replay.Demand) float64 {
			floor := 0.0
			if len(s.Schedule) > 0 && d.At >= dayStart && d.At < dayEnd {
				floor = float64(s.Schedule[0].Warm)
			}
			return replay.ArrivalsDesired(s, d, floor)
		}}
	}
	ps := []replay.Policy{policy(fmt.Sprintf("arrivals, rounded to K=%d", k), rounded)}
	if trace == replay.TraceDay || trace == replay.TraceLoadDay {
		scheduled := rounded
		// The window a team writes for its working day; the model's clock says when it is in
		// force, as KEDA's cron trigger does on the real one.
		scheduled.Schedule = []schedule.Window{{Start: "0 8 * * *", End: "0 20 * * *", Timezone: schedule.DefaultTimezone, Warm: k}}
		ps = append(ps, policy(fmt.Sprintf("arrivals, rounded, schedule: %d warm through the day", k), scheduled))
	}
	launch := rounded
	launch.NodeLaunchSeconds = int(math.Ceil((nodes.BatchMax + nodes.LaunchDelay).Seconds()))
	ps = append(ps, policy(fmt.Sprintf("arrivals, rounded, nodeLaunchSeconds %d", launch.NodeLaunchSeconds), launch))
	for i := range ps {
		ps[i].Floor, ps[i].Max = 1, maxReplicas
		ps[i].Short, ps[i].Long = time.Duration(a.ShortWindowSeconds)*time.Second, time.Duration(a.LongWindowSeconds)*time.Second
	}
	return ps
}
