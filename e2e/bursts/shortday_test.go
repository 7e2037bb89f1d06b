package bursts

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The short day's judge (TestLiveShortDayHoldsTheModel runs it on the cluster, and
// TestRecordedShortDayHoldsTheModel on the committed records). Its setting is the one whose
// figures turn on every part of the loop: arrivals rounded to whole nodes, its pool on
// nodes full to the last slot, so a taken sandbox's replacement waits for a node launch, a
// sandbox boot and an HPA sync (on the full day the other settings' warm hits are 100 % whatever
// the model does).
const (
	shortDayFamily = replay.TraceBurst
	shortDaySeed   = 20260513
	shortDayCut    = 5 * time.Minute
	// shortDayWarmClaims is how many claims' warm hits live and model may part by: one claim is
	// 2.4 points of the day's 42, so the full day's 1.5 points would ask for the same claims
	// exactly, which one node launch a second late on a loaded machine moves.
	shortDayWarmClaims = 2
	// shortDaySizeShare is how far the model's pool size may part from the live one over the day
	// (PoolSizeApart): on the HPA's own syncs and what it was served, the two decide alike.
	shortDaySizeShare = 0.05
)

// shortDaySetting is the rounded setting of the live day's burst family: arrivals, rounded to
// the K sandboxes of a node, under the bounds advise recommends for the family.
func shortDaySetting(k int) LiveSetting {
	return roundedSetting(LiveSetting{Config: []AdviceSetting{{"maxReplicas", "50"}}}, k)
}

// brokenLoops are models a change could plausibly break the model into: each must part from
// the record, or the record cannot tell the model from it and the guard would pass it.
func brokenLoops(rec LiveDayRecord) map[string]replay.Loop {
	loop := func(edit func(*replay.Loop)) replay.Loop {
		l := rec.Loop()
		edit(&l)
		return l
	}
	// Every fourth of the live HPA's syncs: the replay otherwise syncs when the live HPA did.
	var everyMinute []time.Duration
	for i, s := range rec.Rows[0].HPASyncs() {
		if i%4 == 3 {
			everyMinute = append(everyMinute, s)
		}
	}
	return map[string]replay.Loop{
		"no node launch delay (a node Ready at once)":   loop(func(l *replay.Loop) { l.Nodes.LaunchDelay = 0 }),
		"twice the node launch delay":                   loop(func(l *replay.Loop) { l.Nodes.LaunchDelay *= 2 }),
		"an HPA that syncs every minute, not every 15s": loop(func(l *replay.Loop) { l.HPASync, l.Syncs = time.Minute, append([]time.Duration{}, everyMinute...) }),
	}
}

// shortDayParts says where a model's replay res of row parts from the live figures beyond the
// short day's tolerances (warm hits within shortDayWarmClaims claims, node-seconds within
// LiveDayNodeShare, the pool's size within shortDaySizeShare); none: they agree.
func shortDayParts(row RecordedRow, res replay.Result) []string {
	model := ModelFigures(res)
	var parts []string
	if d := row.PoolSizeApart(res, row.Duration); d > shortDaySizeShare {
		parts = append(parts, fmt.Sprintf("the pool's size %.1f%% apart (tolerance %.0f%%)", 100*d, 100*shortDaySizeShare))
	}
	claims := float64(len(row.Claims))
	if d := math.Abs(row.Live.Warm-model.Warm) * claims / 100; d > shortDayWarmClaims+1e-9 {
		parts = append(parts, fmt.Sprintf("warm hits %.1f%% live, %.1f%% model (%.0f claims apart, tolerance %d)", row.Live.Warm, model.Warm, d, shortDayWarmClaims))
	}
	if d := math.Abs(model.NodeSeconds-row.Live.NodeSeconds) / row.Live.NodeSeconds; d > LiveDayNodeShare {
		parts = append(parts, fmt.Sprintf("node-seconds %.0f live, %.0f model (%.1f%% apart, tolerance %.0f%%)", row.Live.NodeSeconds, model.NodeSeconds, 100*d, 100*LiveDayNodeShare))
	}
	return parts
}

// shortDayVerdict holds the model to the record's one row, and each broken model to it too:
// problems are the model parting from it and any broken model agreeing with it (none: the guard
// passes); notes say what was read.
func shortDayVerdict(rec LiveDayRecord) (problems, notes []string, err error) {
	if len(rec.Rows) != 1 {
		return nil, nil, fmt.Errorf("the short day has %d rows, want 1", len(rec.Rows))
	}
	row := rec.Rows[0]
	rows, results, err := rec.Judged()
	if err != nil {
		return nil, nil, err
	}
	model := rows[0].Model
	notes = append(notes, fmt.Sprintf("%d claims; warm hits %.1f%% live, %.1f%% model; node-seconds %.0f live, %.0f model; the pool's size %.1f%% apart; claim wait p95 %.1f s live, %.1f s model (not judged: a handful of cold claims decide it)",
		len(row.Claims), row.Live.Warm, model.Warm, row.Live.NodeSeconds, model.NodeSeconds, 100*row.PoolSizeApart(results[0], row.Duration), row.Live.WaitP95.Seconds(), model.WaitP95.Seconds()))
	if m, err := row.Setting.ModelPolicy(); err == nil {
		if apart, syncs := row.ServedApart(m.Short, m.Long); syncs > 0 {
			notes = append(notes, fmt.Sprintf("the HPA was served counts the trace does not give at %d of its %d syncs (the exporter sees a claim a moment after its create or delete); the replay decides on what it was served", apart, syncs))
		}
	}
	if apart := row.ClaimsApart(results[0]); len(row.Outcomes) > 0 {
		notes = append(notes, fmt.Sprintf("claims the model served otherwise than the cluster: %d of %d", len(apart), len(row.Claims)))
	}
	if len(row.Reads) == 0 || rec.Wall == nil {
		problems = append(problems, "the record has no reads of the exporter or no wall clock: the replay cannot sync when the HPA did on what it was served")
	}
	if parts := shortDayParts(row, results[0]); len(parts) > 0 {
		problems = append(problems, fmt.Sprintf("the model parts from the live loop: %s", strings.Join(parts, "; ")))
	}
	broken := brokenLoops(rec)
	for _, name := range slices.Sorted(maps.Keys(broken)) {
		res, err := row.Replayed(broken[name])
		if err != nil {
			return nil, nil, err
		}
		m := ModelFigures(res)
		if parts := shortDayParts(row, res); len(parts) == 0 {
			problems = append(problems, fmt.Sprintf("a model with %s agrees with the record too (warm hits %.1f%%, node-seconds %.0f): the short day cannot tell it from the model", name, m.Warm, m.NodeSeconds))
		} else {
			notes = append(notes, fmt.Sprintf("a model with %s parts, as it must: %s", name, strings.Join(parts, "; ")))
		}
	}
	return problems, notes, nil
}

// shortDayRecords are the committed records of TestLiveShortDayHoldsTheModel's runs (written
// with SHORTDAY_RECORD).
var shortDayRecords = []string{"shortday-record.json", "shortday-record-2.json"}

// The short day's judge on its committed records: on each run the model agrees and every broken
// model parts; the judge refuses a record the model does not fit (the cluster three claims
// warmer, nodes that launch in 10 s), and one without the exporter's reads or the wall clock.
func TestRecordedShortDayHoldsTheModel(t *testing.T) {
	_, k, err := liveDayNodes()
	require.NoError(t, err)
	var first LiveDayRecord
	for i, name := range shortDayRecords {
		rec, err := ReadLiveDayRecord(filepath.Join("testdata", name))
		require.NoError(t, err)
		require.Len(t, rec.Rows, 1)
		assert.Equal(t, shortDaySetting(k), rec.Rows[0].Setting, "%s: the record is of the setting the live test runs", name)
		assert.Equal(t, shortDayFamily, rec.Rows[0].Family)
		assert.EqualValues(t, shortDaySeed, rec.Rows[0].Seed)
		problems, notes, err := shortDayVerdict(rec)
		require.NoError(t, err)
		assert.Empty(t, problems, "%s", name)
		assert.Len(t, notes, 3+len(brokenLoops(rec)), "%s: what was read, what the HPA was served, the claims apart, and each broken model parting: %v", name, notes)
		assert.Contains(t, notes, "claims the model served otherwise than the cluster: 0 of 42", name)
		if i == 0 {
			first = rec
		}
	}
	edited := func(edit func(*LiveDayRecord, *RecordedRow)) LiveDayRecord {
		rec := first
		row := first.Rows[0]
		edit(&rec, &row)
		rec.Rows = []RecordedRow{row}
		return rec
	}
	for what, c := range map[string]struct {
		rec  LiveDayRecord
		want string
	}{
		"the live cluster three claims warmer than it was": {edited(func(_ *LiveDayRecord, r *RecordedRow) {
			r.Live.Warm += 300.0 / float64(len(r.Claims))
		}), "the model parts from the live loop: warm hits"},
		"the model given nodes that launch in 10 s": {edited(func(rec *LiveDayRecord, _ *RecordedRow) {
			rec.LaunchDelay = 10 * time.Second
		}), "the model parts from the live loop"},
		"a record without the exporter's reads": {edited(func(_ *LiveDayRecord, r *RecordedRow) {
			r.Reads = nil
		}), "the record has no reads of the exporter or no wall clock"},
		"a record without its wall clock": {edited(func(rec *LiveDayRecord, _ *RecordedRow) {
			rec.Wall = nil
		}), "the record has no reads of the exporter or no wall clock"},
	} {
		problems, _, err := shortDayVerdict(c.rec)
		require.NoError(t, err)
		require.NotEmpty(t, problems, what)
		assert.Contains(t, strings.Join(problems, "\n"), c.want, what)
	}
}
