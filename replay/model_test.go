package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

func handTrace(end time.Duration, at ...time.Duration) *Trace {
	tr := &Trace{Name: "hand", Duration: end}
	for _, a := range at {
		tr.Arrivals = append(tr.Arrivals, Arrival{At: a, Lifetime: 20 * time.Second})
	}
	return tr
}

// A fixed pool hands out what is Ready, starts a claim cold when none is,
// and refills each taken sandbox in one boot.
func TestModelFixedPoolRefillsInABoot(t *testing.T) {
	loop := DefaultLoop()
	// Two at once from a pool of 2: both warm. A third 3 s later: both
	// replacements are still booting (5-6 s) and none is Ready within the
	// 2 s grace, so it starts cold.
	r := Simulate(handTrace(60*time.Second, 10*time.Second, 10*time.Second, 13*time.Second), Policy{Fixed: 2}, loop, 1)
	assert.Equal(t, 3, r.Claims)
	assert.Equal(t, 2, r.WarmHits)
	assert.Equal(t, []bool{true, true, false}, r.Warm, "which claims were warm, in arrival order")
	// A claim 17 s in finds the refilled pool: warm.
	r = Simulate(handTrace(60*time.Second, 10*time.Second, 10*time.Second, 17*time.Second), Policy{Fixed: 2}, loop, 1)
	assert.Equal(t, 3, r.WarmHits)
	// The grace: a claim 4.5 s after the first takes the replacement that is
	// Ready within 2 s of it; with no grace it starts cold.
	two := handTrace(60*time.Second, 10*time.Second, 14500*time.Millisecond)
	assert.Equal(t, []bool{true, true}, Simulate(two, Policy{Fixed: 1}, loop, 1).Warm, "the second within the grace")
	noGrace := loop
	noGrace.AdoptGrace = 0
	assert.Equal(t, 1, Simulate(two, Policy{Fixed: 1}, noGrace, 1).WarmHits)
	assert.Equal(t, []bool{true, false}, Simulate(two, Policy{Fixed: 1}, noGrace, 1).Warm)
}

// Idle cost integrates the Ready sandboxes no claim holds: a pool of 3 over
// the trace, less one sandbox for each boot after a claim.
func TestModelIdleCostIsReadyUnheldTime(t *testing.T) {
	loop := DefaultLoop()
	tr := handTrace(60*time.Second, 10*time.Second)
	r := Simulate(tr, Policy{Fixed: 3}, loop, 1)
	span := (tr.Duration + 100*time.Millisecond).Seconds() // the model steps to the trace's end
	assert.InDelta(t, 3*span-5.5, r.IdleWarmPodSeconds, 0.6, "3 x %.1f s, less one boot of 5-6 s", span)
	// Broken once: a pool that never refills pays for 2 after the claim.
	assert.Greater(t, r.IdleWarmPodSeconds, 3*span-20)
}

// The autoscaled pool moves only at the HPA's syncs, within its bounds and
// outside the HPA's tolerance, on what the exporter serves then.
func TestModelPoolMovesAtSyncs(t *testing.T) {
	loop := DefaultLoop()
	tr := handTrace(120*time.Second, 1*time.Second, 2*time.Second, 3*time.Second)
	p := Policy{Floor: 1, Max: 4, Short: 30 * time.Second, Long: 60 * time.Second,
		Desired: func(d Demand) float64 { return float64(2 * d.ArrivalsShort) }}
	r := Simulate(tr, p, loop, 1)
	// 3 arrivals ask for 6, bounded to 4, at the first sync; the short
	// window forgets them at 33 s, so the sync at 45 s returns to the floor.
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {45 * time.Second, 1}}, r.Sizes)
	// Within the tolerance the HPA leaves the size: 10 asks for 10.5.
	p.Max, p.Floor = 20, 10
	p.Desired = func(Demand) float64 { return 10.5 }
	assert.Equal(t, []SizeAt{{0, 10}}, Simulate(tr, p, loop, 1).Sizes)
}

// Every policy of one seed sees the same demand: the result depends on the
// trace and the seed only.
func TestModelIsRepeatable(t *testing.T) {
	tr, err := GenerateDay(DefaultDayParams())
	assert.NoError(t, err)
	a := Simulate(tr, Policy{Fixed: 8}, DefaultLoop(), 7)
	b := Simulate(tr, Policy{Fixed: 8}, DefaultLoop(), 7)
	assert.Equal(t, a, b)
	assert.Equal(t, len(tr.Arrivals), a.Claims)
}

// The scale-down window holds the highest size the HPA recommended within it, and the rate
// policy lets the pool drop at most its value per period, as kube-controller-manager does.
func TestModelScaleDownWindowAndRate(t *testing.T) {
	loop := DefaultLoop()
	// 3 claims at 1-3 s, each for 20 s: held until 21-23 s.
	tr := handTrace(150*time.Second, 1*time.Second, 2*time.Second, 3*time.Second)
	p := Policy{Floor: 1, Max: 4, Desired: func(d Demand) float64 { return float64(d.Held + 1) }}
	// No window (the zero value): up to 4 at 15 s, back to 1 at the first sync after the
	// claims are gone (30 s).
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {30 * time.Second, 1}}, Simulate(tr, p, loop, 1).Sizes)
	// A 60 s window: the recommendation of 4 at 15 s holds the pool until a sync no longer
	// sees it within 60 s (75 s).
	p.ScaleDown = components.ScalingRules{StabilizationWindowSeconds: 60}
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {75 * time.Second, 1}}, Simulate(tr, p, loop, 1).Sizes)
	// One pod per 30 s and no window, on claims held for 50 s: the period's start counts the
	// scale-up at 15 s too (periodStartReplicas = current - added + deleted), so the first drop
	// waits for a sync whose period holds no change: 4 -> 3 at 60 s, 2 at 90 s, 1 at 120 s.
	long := &Trace{Name: "hand", Duration: 150 * time.Second}
	for _, at := range []time.Duration{1 * time.Second, 2 * time.Second, 3 * time.Second} {
		long.Arrivals = append(long.Arrivals, Arrival{At: at, Lifetime: 50 * time.Second})
	}
	p.ScaleDown = components.ScalingRules{Policy: components.PolicyPods, Value: 1, PeriodSeconds: 30}
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {60 * time.Second, 3}, {90 * time.Second, 2}, {120 * time.Second, 1}},
		Simulate(long, p, loop, 1).Sizes)
	// 50 % per sync: 4 -> 2 -> 1 (int(2 x 0.5) = 1).
	p.ScaleDown = components.ScalingRules{Policy: components.PolicyPercent, Value: 50}
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {30 * time.Second, 2}, {45 * time.Second, 1}}, Simulate(tr, p, loop, 1).Sizes)
}

// The scale-up policy limits each sync's rise from the size the period began with, as
// kube-controller-manager does: the program's default (the zero value: one Pods policy as wide as
// the pool) reaches the formula's answer in one sync; Kubernetes' defaults (the larger of 4 pods
// or 100 % per 15 s) take a burst from 5 to 30 through 10 and 20; a Percent policy rounds up.
func TestModelScaleUpPolicies(t *testing.T) {
	loop := DefaultLoop()
	// 25 claims at 20 s, held for a minute, on a pool of 5: the formula asks 5 + 25 = 30.
	burst := &Trace{Name: "hand", Duration: 120 * time.Second}
	for i := 0; i < 25; i++ {
		burst.Arrivals = append(burst.Arrivals, Arrival{At: 20 * time.Second, Lifetime: 60 * time.Second})
	}
	p := Policy{Floor: 5, Max: 40, Desired: func(d Demand) float64 { return float64(d.Held + 5) }}
	sizes := func() []SizeAt {
		r := Simulate(burst, p, loop, 1).Sizes
		var up []SizeAt // the rise only: up to the first drop
		for i, s := range r {
			if i > 0 && s.Replicas < r[i-1].Replicas {
				break
			}
			up = append(up, s)
		}
		return up
	}
	assert.Equal(t, []SizeAt{{0, 5}, {30 * time.Second, 30}}, sizes(), "the program's default: one sync")
	p.KubernetesScaleUp = true
	assert.Equal(t, []SizeAt{{0, 5}, {30 * time.Second, 10}, {45 * time.Second, 20}, {60 * time.Second, 30}}, sizes(),
		"Kubernetes' defaults: 100 % of 5, then of 10, then the last 10")
	p.KubernetesScaleUp = false
	p.ScaleUp = components.ScalingRules{Policy: components.PolicyPods, Value: 4, PeriodSeconds: 30}
	// 4 per 30 s: +4 at 30 s; at 45 s the period holds that rise, so nothing; +4 at 60 s...
	assert.Equal(t, []SizeAt{{0, 5}, {30 * time.Second, 9}, {60 * time.Second, 13}}, sizes()[:3], "4 pods per 30 s")
	p.ScaleUp = components.ScalingRules{Policy: components.PolicyPercent, Value: 10}
	// ceil(5 x 1.1) = 6, ceil(6.6) = 7, ceil(7.7) = 8: a small pool still grows.
	assert.Equal(t, []SizeAt{{0, 5}, {30 * time.Second, 6}, {45 * time.Second, 7}, {60 * time.Second, 8}}, sizes()[:4], "10 % per sync, rounded up")
	// A 30 s scale-up window holds the lowest recommendation within it: the rise at 30 s waits
	// for a sync whose window no longer holds the 5 recommended at 15 s (45 s).
	p.ScaleUp = components.ScalingRules{StabilizationWindowSeconds: 30}
	assert.Equal(t, []SizeAt{{0, 5}, {45 * time.Second, 30}}, sizes(), "a 30 s scale-up window")
}

// The HPA syncs on its own clock: Syncs move every sync, so a burst that lands just before one
// sync under one clock lands just after it under another and is read a period later.
func TestModelHPASyncsOnItsClock(t *testing.T) {
	loop := DefaultLoop()
	tr := handTrace(120*time.Second, 14*time.Second, 14*time.Second, 14*time.Second)
	p := Policy{Floor: 1, Max: 4, Short: 30 * time.Second, Long: 60 * time.Second,
		Desired: func(d Demand) float64 { return float64(d.Held + 1) }}
	// The default clock: syncs at 15, 30, ... s; the claims are read at 15 s.
	assert.Equal(t, []SizeAt{{0, 1}, {15 * time.Second, 4}, {45 * time.Second, 1}}, Simulate(tr, p, loop, 1).Sizes)
	// Syncs at 13.5 s and 28.7 s, then every 15 s: the claims come after the first and are read
	// at 28.7 s, and the pool is at rest again at the first sync after they are gone (34 s).
	loop.Syncs = []time.Duration{13500 * time.Millisecond, 28700 * time.Millisecond}
	assert.Equal(t, []SizeAt{{0, 1}, {28700 * time.Millisecond, 4}, {43700 * time.Millisecond, 1}}, Simulate(tr, p, loop, 1).Sizes)
	// What the exporter served a sync is what it decides on: at 28.7 s it had seen one of the
	// three claims, and at the next sync, 43.7 s, it still counted one that was gone.
	loop.Served = map[time.Duration]Demand{28700 * time.Millisecond: {Held: 1}, 43700 * time.Millisecond: {Held: 1}}
	assert.Equal(t, []SizeAt{{0, 1}, {28700 * time.Millisecond, 2}, {58700 * time.Millisecond, 1}}, Simulate(tr, p, loop, 1).Sizes)
}

// A claim is seen Ready ClaimReady after its sandbox: a warm claim waits that long, a cold one
// its boot and that, and one deleted before then was never seen Ready.
func TestModelClaimReadyLag(t *testing.T) {
	loop := DefaultLoop()
	loop.ClaimReady = 1500 * time.Millisecond
	tr := &Trace{Name: "hand", Duration: 60 * time.Second, Arrivals: []Arrival{
		{At: 10 * time.Second, Lifetime: 20 * time.Second}, // warm
		{At: 10 * time.Second, Lifetime: 20 * time.Second}, // cold: the pool holds one
		{At: 40 * time.Second, Lifetime: time.Second},      // warm, deleted before it is seen Ready
	}}
	r := Simulate(tr, Policy{Fixed: 1}, loop, 1)
	assert.Equal(t, 2, r.WarmHits)
	assert.Equal(t, 1500*time.Millisecond, r.Waits[0])
	assert.True(t, r.Waits[1] > 5*time.Second+1500*time.Millisecond && r.Waits[1] <= 6*time.Second+1500*time.Millisecond, "a boot of 5-6 s and the lag: %s", r.Waits[1])
	assert.Equal(t, time.Second, r.Waits[2])
	assert.Equal(t, 1, r.NeverReady)
	// Broken once: no lag, and every claim is seen Ready.
	loop.ClaimReady = 0
	r = Simulate(tr, Policy{Fixed: 1}, loop, 1)
	assert.Equal(t, time.Duration(0), r.Waits[0])
	assert.Equal(t, 0, r.NeverReady)
}

// On the live harness's clock a boot ends Boot after its binding's whole second and a claim's
// grace AdoptGrace after its creation's, looked at every AdoptRetry: a replacement bound at
// 10.3 s is Ready at 16 s, just when a claim made at 14.9 s (second 14) stops waiting for it;
// with the day half a second past the wall's second the same sandbox is Ready at 15.5 s, and the
// claim takes it at its look at 15.9 s. On the model's own clock the claim waits 2 s from its
// arrival for a boot drawn within (15.3 s, 16.3 s]: warm.
func TestModelOnTheLiveHarnessClock(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tr := &Trace{Name: "hand", Duration: 40 * time.Second, Arrivals: []Arrival{
		{At: ms(10300), Lifetime: 20 * time.Second}, {At: ms(14900), Lifetime: 20 * time.Second}}}
	loop := DefaultLoop()
	assert.Equal(t, []bool{true, true}, Simulate(tr, Policy{Fixed: 1}, loop, 1).Warm)
	loop.Wall, loop.AdoptRetry = &WallClock{}, ms(500)
	assert.Equal(t, []bool{true, false}, Simulate(tr, Policy{Fixed: 1}, loop, 1).Warm)
	loop.Wall.Offset = ms(500)
	r := Simulate(tr, Policy{Fixed: 1}, loop, 1)
	assert.Equal(t, []bool{true, true}, r.Warm)
	assert.Equal(t, time.Second, r.Waits[1], "taken at the claim's look at 15.9 s")
}

// A sandbox the pool controller creates is there to schedule CreateLag after the pool fell
// short: its boot begins then, and no node is launched for it before. A claim at 10 s takes the
// pool's one warm sandbox on a full node (the other slot held by a claim that ends at 11.05 s):
// created at once, its replacement is pending from 10 s and Karpenter's batch (1 s idle) closes
// at 11 s, a node launched 50 ms before the slot frees; created 200 ms later it is pending from
// 10.2 s, and the slot frees before the batch closes. On the harness's clock the replacement of
// a claim at 10.3 s is Ready at 16 s, and one created 800 ms later at 17 s, when a claim made at
// 15.9 s has stopped waiting for it.
func TestModelCreateLag(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	loop := DefaultLoop()
	loop.Nodes = Nodes{SlotsPerNode: 2, LaunchDelay: 45 * time.Second, BatchIdle: time.Second, BatchMax: 10 * time.Second}
	race := &Trace{Name: "hand", Duration: 30 * time.Second, Arrivals: []Arrival{
		{At: time.Second, Lifetime: ms(10050)}, {At: 10 * time.Second, Lifetime: 15 * time.Second}}}
	r := Simulate(race, Policy{Fixed: 1}, loop, 1)
	assert.Equal(t, 1, r.NodesLaunched, "created at once: a node launched for the replacement")
	loop.CreateLag = ms(200)
	r = Simulate(race, Policy{Fixed: 1}, loop, 1)
	assert.Equal(t, 0, r.NodesLaunched, "created 200 ms later: the freed slot takes it")
	assert.Equal(t, []bool{true, true}, r.Warm)

	clock := &Trace{Name: "hand", Duration: 40 * time.Second, Arrivals: []Arrival{
		{At: ms(10300), Lifetime: 20 * time.Second}, {At: ms(15900), Lifetime: 20 * time.Second}}}
	loop = DefaultLoop()
	loop.Wall, loop.AdoptRetry = &WallClock{}, ms(500)
	assert.Equal(t, []bool{true, true}, Simulate(clock, Policy{Fixed: 1}, loop, 1).Warm)
	loop.CreateLag = ms(800)
	assert.Equal(t, []bool{true, false}, Simulate(clock, Policy{Fixed: 1}, loop, 1).Warm)
}
