package history

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reconstruction's logic on sample matrices as query_range returns them (no Prometheus: the
// live test, e2e/advisor/prometheus_live_test.go, reads a real one).

var (
	t0   = at("2026-12-01T08:00:00Z")
	step = 15 * time.Second
	none = math.NaN() // no sample at that step
)

// stream is one series at the steps from t0: NaN where it has no sample.
func stream(labels model.Metric, values ...float64) *model.SampleStream {
	s := &model.SampleStream{Metric: labels}
	for k, v := range values {
		if !math.IsNaN(v) {
			s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(k) * step).UnixNano()), Value: model.SampleValue(v)})
		}
	}
	return s
}

func heldOf(pool string, values ...float64) *model.SampleStream {
	return stream(model.Metric{HeldPoolLabel: model.LabelValue(pool)}, values...)
}

func createdOf(pool, launch string, values ...float64) *model.SampleStream {
	return stream(model.Metric{CreatedPoolLabel: model.LabelValue(pool), LaunchTypeLabel: model.LabelValue(launch), "pod": "controller-0"}, values...)
}

func query(n int, pools ...string) Query {
	return Query{Pools: pools, Start: t0, End: t0.Add(time.Duration(n-1) * step), Step: step}
}

// sec is t0 plus s seconds.
func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// Creations are placed evenly inside their step, deletions too, each ending the oldest claim
// held (never before it was created); claims still held at the end have no deletion; the warm
// and cold launches are counted apart.
func TestReconstructPlacesStepsEvenlyAndDeletesFirstInFirstOut(t *testing.T) {
	h, err := Reconstruct(query(6, "code"),
		model.Matrix{heldOf("code", 0, 2, 3, 1, 1, 1)},
		model.Matrix{
			createdOf("code", "warm", 5, 7, 8, 8, 9, 9), // 5 before the range: the baseline
			createdOf("code", "cold", 0, 0, 0, 1, 1, 1),
		})
	require.NoError(t, err)
	assert.Equal(t, t0, h.Start)
	assert.Equal(t, sec(75), h.End)
	assert.Equal(t, step, h.Resolution)
	assert.Equal(t, Launches{Warm: 4, Cold: 1}, h.Observed["code"])
	assert.InDelta(t, 0.8, h.Observed["code"].WarmShare(), 1e-12)
	assert.Equal(t, 0, h.HeldAtStart["code"])
	type life struct{ created, deleted time.Time }
	var got []life
	for _, c := range h.Pools["code"] {
		got = append(got, life{c.Created, c.Deleted})
	}
	assert.Equal(t, []life{
		// step 1 (0 s, 15 s]: two created, none deleted
		{sec(3.75), sec(30 + 2.5)},
		{sec(11.25), sec(30 + 7.5)},
		// step 2: one created
		{sec(22.5), sec(30 + 12.5)},
		// step 3: one created, the held count falls by 2: three deleted, the three oldest
		{sec(37.5), sec(45 + 7.5)},
		// step 4: one created, held as before: one deleted, the oldest (step 3's)
		{sec(52.5), time.Time{}},
	}, got)
}

// A counter that drops was reset (its controller restarted): its new value is what was created
// since. A series that appears inside the range counts from zero; one there from the start is
// the baseline.
func TestReconstructCountsThroughCounterResetsAndNewSeries(t *testing.T) {
	restarted := stream(model.Metric{CreatedPoolLabel: "code", LaunchTypeLabel: "warm", "pod": "controller-1"}, none, none, none, 2, 2)
	h, err := Reconstruct(query(5, "code"),
		model.Matrix{heldOf("code", 0, 2, 3, 6, 6)},
		model.Matrix{createdOf("code", "warm", 10, 12, 1, 2, 2), restarted})
	require.NoError(t, err)
	// step 1: 12-10; step 2: reset to 1; step 3: 2-1, and the new series' 2; step 4: none
	require.Len(t, h.Pools["code"], 2+1+3)
	perStep := map[int]int{}
	for _, c := range h.Pools["code"] {
		perStep[int(c.Created.Sub(t0)/step)+1]++
		assert.True(t, c.Held(), "nothing was deleted")
	}
	assert.Equal(t, map[int]int{1: 2, 2: 1, 3: 3}, perStep)
	assert.Equal(t, Launches{Warm: 6}, h.Observed["code"])
}

// The claims held at the start are from before the range: counted, not returned, and the first
// to end. One and two missing steps are bridged (the held count carried, the counter's rise seen
// when it is sampled again).
func TestReconstructHeldAtStartEndFirstAndShortGapsAreBridged(t *testing.T) {
	h, err := Reconstruct(query(7, "code"),
		model.Matrix{heldOf("code", 2, 3, none, none, 1, 1, 2)},
		model.Matrix{createdOf("code", "cold", 0, 1, 1, none, 1, 1, 2)})
	require.NoError(t, err)
	assert.Equal(t, 2, h.HeldAtStart["code"])
	require.Len(t, h.Pools["code"], 2)
	c1, c2 := h.Pools["code"][0], h.Pools["code"][1]
	assert.Equal(t, sec(7.5), c1.Created)
	assert.True(t, c1.Held(), "the two held from before ended at step 4, not the claim of step 1")
	assert.Equal(t, sec(75+7.5), c2.Created)
	assert.Equal(t, Launches{Cold: 2}, h.Observed["code"])
}

// Every refusal names what is wrong and returns nothing.
func TestReconstructRefusesNamingWhatIsWrong(t *testing.T) {
	held := model.Matrix{heldOf("code", 0, 1, 2, 2, 1, 1, 0)}
	created := model.Matrix{createdOf("code", "warm", 0, 1, 2, 2, 2, 2, 2)}
	for _, c := range []struct {
		name          string
		q             Query
		held, created model.Matrix
		want          string
		alsoWant      string
	}{
		{name: "step below a second", q: Query{Pools: []string{"code"}, Start: t0, End: sec(60), Step: 500 * time.Millisecond},
			want: "the step is 500ms; it must be at least 1s"},
		{name: "a range of zero", q: Query{Pools: []string{"code"}, Start: t0, End: t0, Step: step},
			want: "the range 2026-12-01T08:00:00Z to 2026-12-01T08:00:00Z is empty"},
		{name: "a range shorter than a step", q: Query{Pools: []string{"code"}, Start: t0, End: sec(10), Step: step},
			want: "shorter than one step (15s)"},
		{name: "no pool", q: query(7), held: held, created: created, want: "no pool to rebuild"},
		{name: "an empty pool name", q: Query{Pools: []string{"code", " "}, Start: t0, End: sec(90), Step: step},
			want: "a pool name is empty"},
		{name: "no held series", q: query(7, "code", "browser"), held: held, created: append(model.Matrix{createdOf("browser", "warm", 0, 1, 1, 1, 1, 1, 1)}, created...),
			want: `pool browser: no warmpool_active_claims series with pool="browser"`, alsoWant: "the label it looked for is pool"},
		{name: "no counter series", q: query(7, "code", "browser"), held: append(model.Matrix{heldOf("browser", 0, 1, 1, 1, 1, 1, 1)}, held...), created: created,
			want: `pool browser: no agent_sandbox_claim_creation_total series with warmpool_name="browser"`, alsoWant: "the label it looked for is warmpool_name"},
		{name: "held starts late", q: query(7, "code"), held: model.Matrix{heldOf("code", none, none, none, 2, 1, 1, 0)}, created: created,
			want:     `pool code: warmpool_active_claims{pool="code"} covers only 2026-12-01T08:00:45Z to 2026-12-01T08:01:30Z of the range 2026-12-01T08:00:00Z to 2026-12-01T08:01:30Z asked`,
			alsoWant: "missing at its start"},
		{name: "counter ends early", q: query(7, "code"), held: held, created: model.Matrix{createdOf("code", "warm", 0, 1, 2, 2, none, none, none)},
			want: `agent_sandbox_claim_creation_total{warmpool_name="code"} covers only 2026-12-01T08:00:00Z to 2026-12-01T08:00:45Z`, alsoWant: "missing at its end"},
		{name: "a gap of three steps", q: query(7, "code"), held: model.Matrix{heldOf("code", 0, none, none, none, 1, 1, 0)}, created: created,
			want: "has no sample from 2026-12-01T08:00:15Z to 2026-12-01T08:00:45Z (3 steps of 15s; at most 2 are bridged): it covers 2026-12-01T08:00:00Z to 2026-12-01T08:00:00Z and 2026-12-01T08:01:00Z to 2026-12-01T08:01:30Z"},
		{name: "held above what the claims give for longer than the skew", q: query(7, "code"), held: model.Matrix{heldOf("code", 0, 1, 3, 3, 3, 2, 1)}, created: created,
			want: "pool code from 2026-12-01T08:00:30Z: warmpool_active_claims reads 3 but the claims created and deleted leave 2, for more than 2 steps in a row", alsoWant: "inconsistent data"},
		{name: "a held count below zero", q: query(7, "code"), held: model.Matrix{heldOf("code", 0, 1, 2, 2, 1, -1, 0)}, created: created,
			want: "pool code at 2026-12-01T08:01:15Z: warmpool_active_claims is -1, below zero", alsoWant: "inconsistent data"},
		{name: "no claims created", q: query(7, "code"), held: model.Matrix{heldOf("code", 1, 1, 1, 1, 1, 1, 0)}, created: model.Matrix{createdOf("code", "warm", 3, 3, 3, 3, 3, 3, 3)},
			want: "pool code: no claims were created between 2026-12-01T08:00:00Z and 2026-12-01T08:01:30Z"},
	} {
		h, err := Reconstruct(c.q, c.held, c.created)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
			assert.Contains(t, err.Error(), c.alsoWant, c.name)
		}
		assert.Nil(t, h, "%s: nothing half-built", c.name)
	}
	// and the good data the cases break is taken
	h, err := Reconstruct(query(7, "code"), held, created)
	require.NoError(t, err)
	assert.Len(t, h.Pools["code"], 2)
}

// The exporter's read and the controller's counter are scraped at different moments: a held count
// a step ahead of the counter (or the counter a step ahead of it) is taken, each claim's creation
// in the counter's step and its deletion at most skewSteps late.
func TestReconstructTakesAScrapeSkew(t *testing.T) {
	for _, c := range []struct {
		name          string
		held, created []float64
	}{
		{"the held count a step ahead", []float64{0, 1, 3, 2, 1, 1, 0}, []float64{0, 1, 2, 2, 2, 2, 2}},
		{"the counter a step ahead", []float64{0, 0, 1, 2, 1, 1, 0}, []float64{0, 1, 2, 2, 2, 2, 2}},
	} {
		h, err := Reconstruct(query(7, "code"), model.Matrix{heldOf("code", c.held...)}, model.Matrix{createdOf("code", "warm", c.created...)})
		require.NoError(t, err, c.name)
		claims := h.Pools["code"]
		require.Len(t, claims, 2, c.name)
		for _, cl := range claims {
			assert.False(t, cl.Held(), "%s: %s ended", c.name, cl.Name)
			assert.True(t, cl.Deleted.After(cl.Created), c.name)
		}
	}
}

// A range longer than one query_range may ask is read in parts; the grid's last step is the last
// whole step before End.
func TestQueryGridEndsAtTheLastWholeStep(t *testing.T) {
	q := Query{Pools: []string{"code"}, Start: t0, End: sec(40), Step: step} // steps at 0, 15, 30
	h, err := Reconstruct(q, model.Matrix{heldOf("code", 0, 1, 1)}, model.Matrix{createdOf("code", "warm", 0, 1, 1)})
	require.NoError(t, err)
	assert.Equal(t, sec(30), h.End)
	assert.True(t, strings.HasPrefix(h.Pools["code"][0].Name, "code-"))
}
