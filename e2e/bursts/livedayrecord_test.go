package bursts

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// A record read back is the record written, and the model replays each row as the live day
// did: the same claims, the pool at rest where the live one was, the nodes the day ran on.
func TestLiveDayRecordReadsBackAndReplays(t *testing.T) {
	claims := []replay.Arrival{{At: 10 * time.Second, Lifetime: 40 * time.Second}, {At: 12 * time.Second, Lifetime: 40 * time.Second}}
	rec := LiveDayRecord{Date: "2026-12-06", SlotsPerNode: 7, LaunchDelay: 45 * time.Second, ConsolidateAfter: 30 * time.Second,
		Rows: []RecordedRow{
			{Family: "day", Seed: 7, Setting: fixedSetting, Trace: "day", Duration: time.Minute, Claims: claims,
				Live: LiveFigures{Warm: 100, NodeSeconds: 120}, LiveSpec: []Step{{0, 12}}, LiveNodes: []Step{{0, 2}}},
			{Family: "day", Seed: 7, Setting: headroomSetting, Trace: "day", Duration: time.Minute, Claims: claims, InitialScale: 3,
				Live: LiveFigures{Warm: 100, NodeSeconds: 60}, LiveSpec: []Step{{0, 3}}, LiveNodes: []Step{{0, 1}}},
		}}
	path := filepath.Join(t.TempDir(), "record.json")
	require.NoError(t, WriteLiveDayRecord(path, rec))
	back, err := ReadLiveDayRecord(path)
	require.NoError(t, err)
	assert.Equal(t, rec, back)

	rows, results, err := back.Judged()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, 2, rows[0].Claims)
	assert.Equal(t, 100.0, rows[0].Model.Warm, "a fixed pool of 12 serves both claims warm")
	assert.Equal(t, 2, results[0].Claims)
	assert.Equal(t, 3, results[1].Sizes[0].Replicas, "the autoscaled pool starts where the live one rested")
	// A fixed pool of 12 on nodes of 7: two nodes the whole minute.
	assert.InDelta(t, 2*(time.Minute+100*time.Millisecond).Seconds(), results[0].NodeSeconds, 1e-6)
	s := back.Rows[1].Series(results[1])
	assert.Equal(t, rec.Rows[1].LiveSpec, s.LiveSpec)
	assert.Equal(t, 3.0, s.ModelSpec[0].Value)
}

func TestLiveDayRecordRefusesWhatTheModelCannotReplay(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	for name, body := range map[string]string{
		"not-json.json":  "{",
		"no-k.json":      `{"slotsPerNode":0,"rows":[{"claims":[{"At":0,"Lifetime":1}]}]}`,
		"no-rows.json":   `{"slotsPerNode":7}`,
		"no-claims.json": `{"slotsPerNode":7,"rows":[{"family":"day","claims":[]}]}`,
	} {
		_, err := ReadLiveDayRecord(write(name, body))
		assert.Error(t, err, name)
	}
	_, err := ReadLiveDayRecord(write("ok.json", `{"slotsPerNode":7,"rows":[{"family":"day","claims":[{"At":0,"Lifetime":1}]}]}`))
	assert.NoError(t, err)
}

// The model held to the recorded live days: on each record, at least as many rows within each
// tolerance (warm hits, node-seconds) and agreeing on every figure as when the record was judged.
// A model change that parts further from the live cluster fails here, without a cluster.
// liveday-record.json is the published seeds' day (docs/bursts.md's live day table), one family
// at a time, with each pod's times; liveday-record-earlier.json the same seeds run before, without
// them; liveday-record-12-at-once.json the same seeds with all 12 pools at once (the harness
// before); liveday-record-unseen.json two seeds the model was never checked against before their
// run, one family at a time; liveday-record-burst-20260513.json the burst day's pools alone, the
// row that agrees only when the model's Karpenter batches the pools' pods together;
// liveday-record-day-again.json the published seeds' day family run again, with kube-scheduler's
// log, after the model's scheduler was chosen on the others (first come, first bound agrees on
// 5 of its rows, the scheduler's backoff on all 6).
func TestRecordedLiveDayHoldsTheModel(t *testing.T) {
	for file, want := range map[string]struct{ rows, warm, nodes, agreeing int }{
		"liveday-record.json":                {rows: 12, warm: 11, nodes: 12, agreeing: 11},
		"liveday-record-earlier.json":        {rows: 12, warm: 11, nodes: 12, agreeing: 10},
		"liveday-record-12-at-once.json":     {rows: 12, warm: 11, nodes: 12, agreeing: 11},
		"liveday-record-unseen.json":         {rows: 12, warm: 11, nodes: 11, agreeing: 9},
		"liveday-record-burst-20260513.json": {rows: 3, warm: 3, nodes: 3, agreeing: 3},
		"liveday-record-day-again.json":      {rows: 6, warm: 6, nodes: 6, agreeing: 6},
	} {
		t.Run(file, func(t *testing.T) {
			rec, err := ReadLiveDayRecord(filepath.Join("testdata", file))
			require.NoError(t, err)
			rows, _, err := rec.Judged()
			require.NoError(t, err)
			require.Len(t, rows, want.rows, "families x seeds x 3 settings")
			var warm, nodes, agree int
			for _, r := range rows {
				if math.Abs(r.Model.Warm-r.Live.Warm) <= LiveDayWarmPoints {
					warm++
				}
				if math.Abs(r.Model.NodeSeconds-r.Live.NodeSeconds)/r.Live.NodeSeconds <= LiveDayNodeShare {
					nodes++
				}
				if len(r.Disagreements()) == 0 {
					agree++
				}
				t.Logf("%s day, seed %d, %s: warm %.1f%% live, %.1f%% model; node-seconds %.0f live, %.0f model; %v",
					r.Family, r.Seed, r.Setting.Name, r.Live.Warm, r.Model.Warm, r.Live.NodeSeconds, r.Model.NodeSeconds, r.Disagreements())
			}
			assert.GreaterOrEqual(t, warm, want.warm, "rows whose warm hits agree")
			assert.GreaterOrEqual(t, nodes, want.nodes, "rows whose node-seconds agree")
			assert.GreaterOrEqual(t, agree, want.agreeing, "rows that agree on every figure")
		})
	}
}

// The HPA's syncs are read from the changes it made to spec.replicas: syncs 15.08 s apart from
// 7.3 s on, seen 80-120 ms after each, give back every sync up to the last change within the
// jitter; a row with no change has none, and the replay keeps the model's clock.
func TestHPASyncsAreReadFromTheSpecChanges(t *testing.T) {
	first, period := 7300*time.Millisecond, 15080*time.Millisecond
	row := RecordedRow{LiveSpec: []Step{{0, 1}}}
	for i, sync := range []int{1, 2, 6, 11, 19, 30} {
		seen := first + time.Duration(sync)*period + specReadLead + time.Duration(i%3-1)*20*time.Millisecond
		row.LiveSpec = append(row.LiveSpec, Step{seen, float64(i + 2)})
	}
	syncs := row.HPASyncs()
	require.Len(t, syncs, 31, "%v", syncs)
	for i, s := range syncs {
		assert.InDelta(t, (first + time.Duration(i)*period).Seconds(), s.Seconds(), 0.03, "sync %d", i)
	}
	assert.Empty(t, RecordedRow{LiveSpec: []Step{{0, 1}}}.HPASyncs(), "no change, no clock")
}

// With the tap's reads, the HPA's syncs are KEDA's evaluations: each change at the last
// evaluation before it was seen (however long the write took), and the syncs between changes at
// the evaluations where the clock puts them, not at KEDA's polling loop's, which run at a phase
// of their own.
func TestHPASyncsAreTheEvaluationsTheTapRecorded(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// The HPA evaluates at 4.1 s and every 15.1 s; KEDA's loop at 11.0 s and every 15 s; each
	// evaluation reads the exporter three times, 2 ms apart.
	var hpa, reads []time.Duration
	for i := 0; i < 6; i++ {
		hpa = append(hpa, ms(4100+15100*i))
	}
	for i := 0; i < 6; i++ {
		for _, e := range []time.Duration{hpa[i], ms(11000 + 15000*i)} {
			for k := 0; k < 3; k++ {
				reads = append(reads, e+ms(2*k))
			}
		}
	}
	slices.Sort(reads)
	row := RecordedRow{LiveSpec: []Step{{0, 1}, {hpa[1] + ms(900), 5}, {hpa[5] + ms(200), 3}}}
	for _, at := range reads {
		row.Reads = append(row.Reads, DemandRead{At: at})
	}
	require.Len(t, row.Evaluations(), 12, "one per evaluation, not per read")
	assert.Equal(t, hpa, row.HPASyncs())
	// Without the reads the changes are read specReadLead before they were seen.
	row.Reads = nil
	assert.Equal(t, hpa[1]+ms(900)-specReadLead, row.HPASyncs()[1])
}

// The claims apart are those warm on one side only, named by their place and creation; a record
// without outcomes has none to compare.
func TestClaimsApartAreTheClaimsWarmOnOneSideOnly(t *testing.T) {
	row := RecordedRow{Claims: []replay.Arrival{{At: time.Second}, {At: 2 * time.Second}, {At: 3 * time.Second}},
		Outcomes: []ClaimOutcome{{Warm: true, Ready: true, Wait: time.Second}, {Warm: true, Ready: true, Wait: time.Second}, {Ready: true, Wait: 9 * time.Second}}}
	res := replay.Result{Warm: []bool{true, false, true}, Waits: []time.Duration{time.Second, 8 * time.Second, time.Second}}
	assert.Equal(t, []ClaimApart{
		{Index: 1, At: 2 * time.Second, Live: row.Outcomes[1], ModelWarm: false, ModelWait: 8 * time.Second},
		{Index: 2, At: 3 * time.Second, Live: row.Outcomes[2], ModelWarm: true, ModelWait: time.Second},
	}, row.ClaimsApart(res))
	row.Outcomes = nil
	assert.Empty(t, row.ClaimsApart(res))
}

// The pool's size apart integrates the gap between the two sizes over the live size's integral.
func TestPoolSizeApartIntegratesTheGap(t *testing.T) {
	row := RecordedRow{LiveSpec: []Step{{0, 4}, {10 * time.Second, 8}}}
	same := replay.Result{Sizes: []replay.SizeAt{{At: 0, Replicas: 4}, {At: 10 * time.Second, Replicas: 8}}}
	assert.Zero(t, row.PoolSizeApart(same, 20*time.Second))
	// The model grows 5 s late: 4 pods apart for 5 s, of 4*10 + 8*10 pod-seconds.
	late := replay.Result{Sizes: []replay.SizeAt{{At: 0, Replicas: 4}, {At: 15 * time.Second, Replicas: 8}}}
	assert.InDelta(t, 20.0/120, row.PoolSizeApart(late, 20*time.Second), 1e-9)
	// Only the window counts: cut at 12 s, 2 s of 4 apart of 4*10 + 8*2.
	assert.InDelta(t, 8.0/56, row.PoolSizeApart(late, 12*time.Second), 1e-9)
}

// A family run on a control plane of its own keeps its own place on the wall clock: its rows
// replay on their wall clock, not the record's.
func TestARowReplaysOnItsOwnWallClock(t *testing.T) {
	rec, err := ReadLiveDayRecord(filepath.Join("testdata", "liveday-record-unseen.json"))
	require.NoError(t, err)
	require.Nil(t, rec.Wall, "each family of this record ran on its own control plane")
	row := rec.Rows[len(rec.Rows)-1]
	require.NotNil(t, row.Wall)
	got, err := row.Replayed(rec.Loop())
	require.NoError(t, err)
	loop := rec.Loop()
	loop.Wall = row.Wall
	bare := row
	bare.Wall = nil
	want, err := bare.Replayed(loop)
	require.NoError(t, err)
	assert.Equal(t, want.Waits, got.Waits)
	loop.Wall = &replay.WallClock{Offset: row.Wall.Offset + 500*time.Millisecond}
	other, err := bare.Replayed(loop)
	require.NoError(t, err)
	assert.NotEqual(t, other.Waits, got.Waits, "half a second on the wall clock moves some wait")
}

// The model's create lag is what the live day measured: on the record that keeps the booting
// sandboxes, the median of the fixed pools' CreateLags rounds to liveCreateLag in the model's
// 100 ms steps. A fixed pool's row with its booting count read as the Ready one (a rise for
// each sandbox Ready) gives other lags; an autoscaled pool's row gives none.
func TestCreateLagIsTheRecordsMedian(t *testing.T) {
	rec, err := ReadLiveDayRecord(filepath.Join("testdata", "liveday-record-unseen.json"))
	require.NoError(t, err)
	var lags []time.Duration
	for _, r := range rec.Rows {
		got := r.CreateLags()
		if m, _ := r.Setting.ModelPolicy(); m.Fixed == 0 {
			assert.Empty(t, got, "%s day %d, %s: an autoscaled pool", r.Family, r.Seed, r.Setting.Name)
			continue
		}
		require.Greater(t, len(got), len(r.Claims)/2, "%s day %d: most warm claims' replacements seen", r.Family, r.Seed)
		t.Logf("%s day %d: %d lags, median %s", r.Family, r.Seed, len(got), replay.Percentile(got, 50))
		lags = append(lags, got...)
	}
	median := replay.Percentile(lags, 50)
	assert.Equal(t, liveCreateLag, median.Round(100*time.Millisecond), "the records' median lag, %s", median)
	// Broken once: the Ready count read for the booting one.
	r := rec.Rows[1]
	require.Equal(t, "fixed", r.Setting.Name)
	r.LiveBooting = r.LiveReady
	assert.NotEqual(t, liveCreateLag, replay.Percentile(r.CreateLags(), 50).Round(100*time.Millisecond))
}

// A row's replay hears the cluster's other pools: their pods found unschedulable keep its
// Karpenter's window open, their pods gone and their nodes' first pods make its scheduler try
// its pending pods again. Only rows that ran on its control plane count.
func TestRecordSharesTheClustersEvents(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	wall := &replay.WallClock{Offset: s(0.25)}
	rec := LiveDayRecord{Rows: []RecordedRow{
		{Family: "day", Wall: wall, LivePods: []PodTimes{{Name: "own", Unschedulable: s(1), Bound: s(2), Node: "n0", Gone: s(3)}}},
		{Family: "day", Wall: wall, LivePods: []PodTimes{
			{Name: "a", Unschedulable: s(4), Bound: s(9), Node: "n1", Gone: s(20)},
			{Name: "b", Bound: s(11), Node: "n1", Gone: s(15)},
			{Name: "c", Bound: s(12), Node: "n2"},
			{Name: "never-bound", Unschedulable: s(5), Gone: s(6)},
		}},
		{Family: "burst", Wall: wall, LivePods: []PodTimes{{Name: "elsewhere", Unschedulable: s(7), Bound: s(8), Node: "n3", Gone: s(10)}}},
	}}
	assert.Equal(t, []time.Duration{s(4), s(5)}, rec.SharedTriggers(0), "the day row beside it, not the burst family's")
	assert.Equal(t, []time.Duration{s(9), s(12), s(15), s(20)}, rec.SharedRequeues(0),
		"n1's first pod at 9 s, n2's at 12 s, b and a gone at 15 and 20 s; a pod never bound frees nothing")
	assert.Empty(t, rec.SharedRequeues(2), "the burst family ran alone")
}
