package bursts

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The settings advise prints, as the live day renders and replays them.
var (
	headroomSetting = LiveSetting{Name: "advised", What: "claims + headroom 3", Config: []AdviceSetting{
		{"minReplicas", "1"}, {"maxReplicas", "30"}, {"headroom", "3"}}}
	roundedArrivals = LiveSetting{Name: "rounded", What: "arrivals, rounded to 7 per node, headroom 1", Config: []AdviceSetting{
		{"minReplicas", "1"}, {"maxReplicas", "30"}, {"sizing.policy", "arrivals"}, {"sizing.bootSeconds", "6"},
		{"sizing.warmHitTarget", "0.99"}, {"sizing.sandboxesPerNode", "7"}, {"sizing.nodeLaunchSeconds", "55"}, {"headroom", "1"}}}
	fixedSetting = LiveSetting{Name: "fixed", What: "fixed-12", Config: []AdviceSetting{
		{"minReplicas", "12"}, {"maxReplicas", "12"}, {"loadCap", "5"}}}
)

// Each setting's model policy evaluates the formula the program renders for its keys: the
// program's ScaledObject carries components' formula for the same sizing, and the model's
// Desired is components' evaluation of it, at several readings.
func TestLiveSettingsModelWhatTheProgramRenders(t *testing.T) {
	shared := sharedConfig(t)
	delete(shared, "minReplicas")
	delete(shared, "maxReplicas")
	formula := func(s LiveSetting) string {
		t.Helper()
		cfg, err := s.ProgramConfig()
		require.NoError(t, err)
		objs, err := Render(Policy{Name: s.Name, Trace: "t", Config: cfg}, shared, "http://127.0.0.1:1/demand")
		require.NoError(t, err)
		so := objs.Find("scaledobjects")
		require.NotNil(t, so)
		f, _ := nested(so.Object, "spec", "advanced", "scalingModifiers", "formula").(string)
		return f
	}
	readings := []replay.Demand{{}, {Held: 4}, {Held: 5, ArrivalsShort: 3, ArrivalsLong: 9}, {Held: 20, ArrivalsShort: 12, ArrivalsLong: 40}}

	assert.Equal(t, components.HeadroomFormula("1", 3), formula(headroomSetting))
	p, err := headroomSetting.ModelPolicy()
	require.NoError(t, err)
	assert.Equal(t, 1, p.Floor)
	assert.Equal(t, 30, p.Max)
	assert.Equal(t, components.DefaultScaleDown(), p.ScaleDown, "the program's default scale-down window")
	assert.Equal(t, components.DefaultScaleUp(), p.ScaleUp)
	for _, d := range readings {
		assert.Equal(t, float64(d.Held+3), p.Desired(d))
	}

	sz := components.Sizing{Policy: components.SizingArrivals, BootSeconds: 6, HPASyncSeconds: components.DefaultHPASyncSeconds,
		WarmHitTarget: 0.99, ShortWindowSeconds: components.DefaultShortWindowSeconds, LongWindowSeconds: components.DefaultLongWindowSeconds,
		SandboxesPerNode: 7, NodeLaunchSeconds: 55}
	assert.Equal(t, components.ArrivalsFormula(sz, 1), formula(roundedArrivals))
	p, err = roundedArrivals.ModelPolicy()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(components.DefaultShortWindowSeconds)*time.Second, p.Short)
	assert.Equal(t, time.Duration(components.DefaultLongWindowSeconds)*time.Second, p.Long)
	for _, d := range readings {
		assert.Equal(t, components.ArrivalsDesired(sz, 1, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), 0), p.Desired(d), "%+v", d)
	}
	for _, d := range readings {
		assert.Zero(t, int(float64(d.Held)+p.Desired(d))%7, "rounded: the claims held and the pool fill whole nodes of 7 (%+v)", d)
	}

	assert.Equal(t, 12, fixedSetting.Fixed())
	p, err = fixedSetting.ModelPolicy()
	require.NoError(t, err)
	assert.Equal(t, 12, p.Fixed)
	assert.Zero(t, headroomSetting.Fixed())
	assert.Zero(t, roundedArrivals.Fixed())
}

func TestLiveSettingsRefuseWhatTheModelDoesNotReplay(t *testing.T) {
	for _, c := range []struct {
		cfg  []AdviceSetting
		want string
	}{
		{[]AdviceSetting{{"minReplicas", "1"}, {"maxReplicas", "30"}, {"scaleDown.stabilizationWindowSeconds", "300"}}, "does not replay"},
		{[]AdviceSetting{{"minReplicas", "1"}, {"maxReplicas", "30"}, {"targetValue", "2"}}, "targetValue 1 only"},
		{[]AdviceSetting{{"minReplicas", "1"}, {"maxReplicas", "30"}, {"sizing.policy", "claims"}}, `replays "arrivals" only`},
		{[]AdviceSetting{{"minReplicas", "5"}, {"maxReplicas", "3"}, {"headroom", "1"}}, "want at least minReplicas"},
		{[]AdviceSetting{{"minReplicas", "1"}, {"maxReplicas", "x"}}, `maxReplicas is "x"`},
	} {
		_, err := LiveSetting{What: "s", Config: c.cfg}.ModelPolicy()
		if assert.Error(t, err, "%v", c.cfg) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, err := LiveSetting{What: "s", Config: []AdviceSetting{{"pools[0].headroom", "1"}}}.ProgramConfig()
	assert.ErrorContains(t, err, "top-level keys and sizing.* only")
	cfg, err := roundedArrivals.ProgramConfig()
	require.NoError(t, err)
	assert.JSONEq(t, `{"policy":"arrivals","bootSeconds":6,"warmHitTarget":0.99,"sandboxesPerNode":7,"nodeLaunchSeconds":55}`, cfg[SizingKey])
	assert.Equal(t, "1", cfg["headroom"])
}

func TestWriteAdviseHistoryPutsEachTraceOnItsDay(t *testing.T) {
	day := 20 * time.Minute
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).Truncate(day)
	traces := []*replay.Trace{
		{Name: "a", Duration: day, Arrivals: []replay.Arrival{{At: 10 * time.Second, Lifetime: 30 * time.Second}}},
		{Name: "b", Duration: day, Arrivals: []replay.Arrival{{At: 5 * time.Second, Lifetime: 3 * time.Minute}, {At: 19 * time.Minute, Lifetime: 2 * time.Minute}}},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteAdviseHistory(&buf, "live", start, day, traces))
	h, err := history.Read(&buf, "history")
	require.NoError(t, err)
	got := h.Arrivals("live")
	require.Len(t, got, 3)
	at := func(i int) time.Time { return h.Start.Add(got[i].At) }
	assert.Equal(t, start.Add(10*time.Second), at(0))
	assert.Equal(t, start.Add(day+5*time.Second), at(1), "the second trace is the second day")
	assert.Equal(t, 3*time.Minute, got[1].Lifetime)
	assert.Equal(t, start.Add(day+19*time.Minute), at(2))

	assert.ErrorContains(t, WriteAdviseHistory(&buf, "live", start.Add(time.Minute), day, traces), "not on a multiple of its day")
	long := []*replay.Trace{{Name: "long", Duration: day + time.Second}}
	assert.ErrorContains(t, WriteAdviseHistory(&buf, "live", start, day, long), "longer than a day")
}

func TestReadAdviceTakesTheRecommendationAndTheSmallestFixedPoolAtTheTarget(t *testing.T) {
	js := `[{"Pool":"live","Need":13,"Outcomes":[
	  {"Name":"fixed-10","Config":[{"Key":"minReplicas","Value":"10"}],"Ladder":"fixed","Level":9,"DaysAtTarget":12},
	  {"Name":"fixed-12","Config":[{"Key":"minReplicas","Value":"12"},{"Key":"maxReplicas","Value":"12"}],"Ladder":"fixed","Level":11,"DaysAtTarget":13},
	  {"Name":"fixed-11","Config":[{"Key":"minReplicas","Value":"11"},{"Key":"maxReplicas","Value":"11"}],"Ladder":"fixed","Level":10,"DaysAtTarget":14},
	  {"Name":"claims + headroom 3","Config":[{"Key":"headroom","Value":"3"}],"Ladder":"claims + headroom","Level":2,"DaysAtTarget":13}],
	  "Recommended":{"Name":"claims + headroom 3","Ladder":"claims + headroom","Config":[{"Key":"minReplicas","Value":"1"},{"Key":"maxReplicas","Value":"30"},{"Key":"headroom","Value":"3"}]}}]`
	rec, fixed, err := ReadAdvice([]byte(js))
	require.NoError(t, err)
	assert.Equal(t, "advised", rec.Name)
	assert.Equal(t, "claims + headroom 3", rec.What)
	assert.Equal(t, []AdviceSetting{{"minReplicas", "1"}, {"maxReplicas", "30"}, {"headroom", "3"}}, rec.Config)
	assert.Equal(t, "fixed-11", fixed.What, "the smallest size at the target on the days needed, not the first listed")
	assert.Equal(t, 11, fixed.Fixed())

	// advise recommends the fixed pool: the first setting is its cheapest autoscaled one at the
	// target, else the one on most days.
	fixedFirst := `[{"Pool":"live","Need":13,"Outcomes":[
	  {"Name":"fixed-12","Config":[{"Key":"minReplicas","Value":"12"},{"Key":"maxReplicas","Value":"12"}],"Ladder":"fixed","Level":11,"DaysAtTarget":13,"Cost":900},
	  {"Name":"claims + headroom 6","Ladder":"claims + headroom","DaysAtTarget":13,"Cost":1000},
	  {"Name":"arrivals, headroom 2","Ladder":"arrivals","DaysAtTarget":14,"Cost":950},
	  {"Name":"claims + headroom 4","Ladder":"claims + headroom","DaysAtTarget":12,"Cost":700}],
	  "Recommended":{"Name":"fixed-12","Ladder":"fixed"}}]`
	rec, fixed, err = ReadAdvice([]byte(fixedFirst))
	require.NoError(t, err)
	assert.Equal(t, "autoscaled", rec.Name)
	assert.Equal(t, "arrivals, headroom 2", rec.What, "the cheapest autoscaled setting at the target")
	assert.Equal(t, "fixed-12", fixed.What)
	// A recommendation with a schedule: the cheapest at the target without one.
	withSchedule := strings.Replace(fixedFirst, `"Recommended":{"Name":"fixed-12","Ladder":"fixed"}`,
		`"Recommended":{"Name":"arrivals, schedule","Ladder":"arrivals","Config":[{"Key":"sizing.schedule[0].warm","Value":"8"}]}`, 1)
	withSchedule = strings.Replace(withSchedule, `{"Name":"arrivals, headroom 2","Ladder":"arrivals","DaysAtTarget":14,"Cost":950}`,
		`{"Name":"arrivals, headroom 2, schedule","Ladder":"arrivals","DaysAtTarget":14,"Cost":950,"Config":[{"Key":"sizing.schedule[0].warm","Value":"8"}]}`, 1)
	rec, _, err = ReadAdvice([]byte(withSchedule))
	require.NoError(t, err)
	assert.Equal(t, "autoscaled", rec.Name)
	assert.Equal(t, "claims + headroom 6", rec.What, "the scheduled settings left out")
	noneAtTarget := strings.Replace(strings.Replace(fixedFirst, `"DaysAtTarget":14`, `"DaysAtTarget":11`, 1), `"DaysAtTarget":13,"Cost":1000`, `"DaysAtTarget":10,"Cost":1000`, 1)
	rec, _, err = ReadAdvice([]byte(noneAtTarget))
	require.NoError(t, err)
	assert.Equal(t, "claims + headroom 4", rec.What, "none at the target: the one on most days")
	for js, want := range map[string]string{
		`[{"Pool":"p","Need":1,"Recommended":{"Name":"fixed-1","Ladder":"fixed"},"Outcomes":[{"Name":"fixed-1","Ladder":"fixed","Level":0,"DaysAtTarget":1}]}]`: "replayed no autoscaled setting",
		`{}`:                      "advise's --json",
		`[]`:                      "0 pools",
		`[{"Pool":"p","Need":3}]`: "recommended nothing",
		`[{"Pool":"p","Need":3,"Recommended":{"Name":"x"},"Outcomes":[{"Ladder":"fixed","Level":1,"DaysAtTarget":2}]}]`: "no fixed pool that reaches the target",
	} {
		_, _, err := ReadAdvice([]byte(js))
		assert.ErrorContains(t, err, want, js)
	}
}

func TestLiveTraceIsWhatTheHarnessDid(t *testing.T) {
	start := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	claims := []ClaimResult{
		{Name: "claim-0002", Created: start.Add(3 * time.Second), Deleted: start.Add(40 * time.Second)},
		{Name: "claim-0001", Created: start.Add(1200 * time.Millisecond), Deleted: start.Add(31 * time.Second)},
	}
	tr, err := LiveTrace("day", 5*time.Minute, claims, start)
	require.NoError(t, err)
	assert.Equal(t, []replay.Arrival{{At: 1200 * time.Millisecond, Lifetime: 29800 * time.Millisecond}, {At: 3 * time.Second, Lifetime: 37 * time.Second}}, tr.Arrivals)
	assert.Equal(t, 5*time.Minute, tr.Duration)
	claims[0].Deleted = time.Time{}
	_, err = LiveTrace("day", 5*time.Minute, claims, start)
	assert.ErrorContains(t, err, "claim-0002 was created")
}

func TestLiveClaimFiguresCountTheLaunchTypeAndTheWaits(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	var claims []ClaimResult
	for i := range 19 {
		claims = append(claims, ClaimResult{Created: t0, Ready: t0.Add(time.Duration(i) * 100 * time.Millisecond), LaunchType: "warm", Deleted: t0.Add(time.Minute)})
	}
	// One cold claim that waited a boot, and one never Ready: it waited its 30 s life.
	claims = append(claims, ClaimResult{Created: t0, Ready: t0.Add(6 * time.Second), LaunchType: "cold", Deleted: t0.Add(time.Minute)},
		ClaimResult{Created: t0, Deleted: t0.Add(30 * time.Second)})
	f := LiveClaimFigures(claims)
	assert.InDelta(t, 100*19.0/21, f.Warm, 1e-9)
	assert.Equal(t, 1, f.NeverReady)
	assert.Equal(t, 6*time.Second, f.WaitP95, "p95 of 21 waits: the 20th, the cold claim's boot")
	assert.Equal(t, LiveFigures{}, LiveClaimFigures(nil))
}

func TestLiveDayRowsAgreeOnlyWithinEachTolerance(t *testing.T) {
	base := LiveDayRow{Family: "day", Seed: 1001, Setting: headroomSetting, Claims: 500,
		Live:  LiveFigures{Warm: 98, NodeSeconds: 10000, WaitP95: 500 * time.Millisecond},
		Model: LiveFigures{Warm: 99.4, NodeSeconds: 10900, WaitP95: 2400 * time.Millisecond}}
	assert.Empty(t, base.Disagreements(), "1.4 points, 9 %, 1.9 s: within every tolerance")
	for name, c := range map[string]struct {
		change func(*LiveDayRow)
		want   string
	}{
		"warm":      {func(r *LiveDayRow) { r.Model.Warm = 99.6 }, "warm hits 98.0% live, 99.6% model"},
		"warm down": {func(r *LiveDayRow) { r.Model.Warm = 96.4 }, "1.6 points apart"},
		"nodes":     {func(r *LiveDayRow) { r.Model.NodeSeconds = 8900 }, "11.0% apart"},
		"no nodes":  {func(r *LiveDayRow) { r.Live.NodeSeconds = 0 }, "never read"},
		"wait":      {func(r *LiveDayRow) { r.Model.WaitP95 = 2600 * time.Millisecond }, "claim wait p95 0.5 s live, 2.6 s model"},
	} {
		r := base
		c.change(&r)
		d := r.Disagreements()
		if assert.Len(t, d, 1, name) {
			assert.Contains(t, d[0], c.want, name)
		}
	}
	bad := base
	bad.Model.Warm = 90
	table := LiveDayTable([]LiveDayRow{base, bad})
	assert.Equal(t, 4, strings.Count(table, "\n"), "a header, its rule and a line per row")
	assert.Contains(t, table, "| day | 1001 | advised (claims + headroom 3) | 500 | 98.0% / 99.4% | 10000 / 10900 | 0.5 s / 2.4 s | 0 / 0 | yes |")
	assert.Contains(t, table, "| **no**: warm hits 98.0% live, 90.0% model")
}

func TestNodeSecondsAndStepsCountOnlyTheWindow(t *testing.T) {
	from := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	to := from.Add(100 * time.Second)
	recs := []claimRecord{
		{Name: "before-and-through", Created: from.Add(-50 * time.Second)},                      // 100 s
		{Name: "inside", Created: from.Add(10 * time.Second), Gone: from.Add(40 * time.Second)}, // 30 s
		{Name: "gone-before", Created: from.Add(-90 * time.Second), Gone: from.Add(-10 * time.Second)},
		{Name: "after", Created: to.Add(time.Second)},
		{Name: "past-the-end", Created: from.Add(90 * time.Second), Gone: to.Add(30 * time.Second)}, // 10 s
	}
	assert.InDelta(t, 140, nodeSecondsWithin(recs, from, to), 1e-9)
	assert.Equal(t, []Step{{At: 0, Value: 1}, {At: 10 * time.Second, Value: 2}, {At: 40 * time.Second, Value: 1}, {At: 90 * time.Second, Value: 2}},
		nodeSteps(recs, from, to))
}

func TestLiveDayConfigKnobs(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := loadLiveDayConfig(env(nil))
	require.NoError(t, err)
	assert.Equal(t, []string{replay.TraceDay, replay.TraceBurst}, cfg.families)
	assert.Equal(t, []uint64{20260513, 1001}, cfg.seeds)
	assert.Equal(t, 14, cfg.adviseDays)
	assert.False(t, cfg.firstCome, "the model's scheduler: kube-scheduler's pod backoff")
	cfg, err = loadLiveDayConfig(env(map[string]string{"LIVEDAY_FAMILIES": "burst", "LIVEDAY_SEEDS": "77", "LIVEDAY_DURATION": "4m", "LIVEDAY_PLOTS": "off", "LIVEDAY_SCHEDULER": "first-come"}))
	require.NoError(t, err)
	assert.True(t, cfg.firstCome)
	assert.Equal(t, []string{replay.TraceBurst}, cfg.families)
	assert.Equal(t, 4*time.Minute, cfg.cut)
	assert.Empty(t, cfg.plots)
	_, err = loadLiveDayConfig(env(map[string]string{"LIVEDAY_FAMILIES": "week", "LIVEDAY_SEEDS": "3", "LIVEDAY_DURATION": "10s", "LIVEDAY_ADVISE_DAYS": "0", "LIVEDAY_SCHEDULER": "fifo"}))
	require.Error(t, err)
	for _, want := range []string{`unknown family "week"`, "LIVEDAY_DURATION", "LIVEDAY_ADVISE_DAYS", `LIVEDAY_SCHEDULER="fifo"`} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = loadLiveDayConfig(env(map[string]string{"LIVEDAY_SEEDS": "3"}))
	assert.ErrorContains(t, err, "seed 3 is one of advise's days")
}

func TestLiveDayPlotWritesAPicture(t *testing.T) {
	s := LiveDaySeries{
		Claims:   []Step{{0, 0}, {time.Minute, 4}, {3 * time.Minute, 1}},
		LiveSpec: []Step{{0, 2}, {75 * time.Second, 8}}, ModelSpec: []Step{{0, 2}, {60 * time.Second, 8}},
		LiveNodes: []Step{{0, 1}, {2 * time.Minute, 2}}, ModelNodes: []Step{{0, 1}, {110 * time.Second, 2}},
	}
	path := filepath.Join(t.TempDir(), "liveday.png")
	require.NoError(t, LiveDayPlot(path, "day", s))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG")), "a PNG")
	s.ModelNodes = nil
	assert.ErrorContains(t, LiveDayPlot(path, "day", s), "a series is empty")
	assert.ErrorContains(t, LiveDayPlot(filepath.Join(t.TempDir(), "x.jpg"), "day", s), "write .png or .svg")
}
