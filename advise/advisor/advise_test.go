package advisor

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// historyOf writes the traces as one pool's history, one trace per day of length day.
func historyOf(t *testing.T, pool string, day time.Duration, trs ...*replay.Trace) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("pool,claim,created,deleted\n")
	for i, tr := range trs {
		for j, a := range tr.Arrivals {
			start := epoch.Add(time.Duration(i)*day + a.At)
			fmt.Fprintf(&b, "%s,c-%d-%d,%s,%s\n", pool, i, j, start.Format(time.RFC3339Nano), start.Add(a.Lifetime).Format(time.RFC3339Nano))
		}
	}
	return b.String()
}

func dayTraces(seeds ...uint64) []*replay.Trace {
	var out []*replay.Trace
	for _, s := range seeds {
		p := replay.DefaultLoadDayParams()
		p.Seed = s
		tr, err := replay.GenerateLoadDay(p)
		if err != nil {
			panic(err)
		}
		out = append(out, tr)
	}
	return out
}

// A history written from replay traces comes back as those traces, day by day and aligned to
// the clock's days: what advise replays is the team's demand, to the nanosecond.
func TestDaysAreTheHistorysDemand(t *testing.T) {
	const day = 20 * time.Minute
	trs := dayTraces(1, 2, 3)
	h, err := history.Read(strings.NewReader(historyOf(t, "code", day, trs...)), "h.csv")
	require.NoError(t, err)
	ds := days(h, "code", day, time.UTC)
	require.Len(t, ds, 3)
	for i, d := range ds {
		require.Len(t, d.Arrivals, len(trs[i].Arrivals), "day %d", i+1)
		for j, a := range d.Arrivals {
			assert.Equal(t, trs[i].Arrivals[j].At, a.At, "day %d claim %d", i+1, j)
			assert.Equal(t, trs[i].Arrivals[j].Lifetime, a.Lifetime, "day %d claim %d", i+1, j)
		}
	}
}

// The advice is the replay's: the fixed pool it reports for each size is what replay.Simulate
// gives on those days, and the recommendation is the cheapest setting reaching the target on
// every day (fewer than 10 days), with its config lines.
func TestAdviceIsTheCheapestSettingAtTheTarget(t *testing.T) {
	const day = 20 * time.Minute
	trs := dayTraces(11, 12, 13)
	h, err := history.Read(strings.NewReader(historyOf(t, "code", day, trs...)), "h.csv")
	require.NoError(t, err)
	p := DefaultParams()
	p.Day = day
	advice, err := Advise(h, p)
	require.NoError(t, err)
	require.Len(t, advice, 1)
	a := advice[0]
	require.NotNil(t, a.Recommended, a.Verdict)
	require.NotNil(t, a.Lowest)
	var fixedAtTarget *Outcome
	for _, o := range a.Outcomes {
		if o.DaysAtTarget == o.Days {
			assert.LessOrEqual(t, a.Lowest.Cost, o.Cost, "%s reaches the target for less than the lowest %s", o.Name, a.Lowest.Name)
			if o.policy.Fixed > 0 && fixedAtTarget == nil {
				fixedAtTarget = &o
			}
		}
	}
	assert.Equal(t, a.Days, a.Recommended.DaysAtTarget)
	if a.Recommended.policy.Fixed == 0 {
		// the margin: raised while it costs at most MarginShare of the fixed pool at the target
		require.NotNil(t, fixedAtTarget)
		assert.LessOrEqual(t, a.Recommended.Cost, p.MarginShare*fixedAtTarget.Cost)
		assert.Positive(t, a.Margin, "%s was not raised, though it costs %.2f of %s", a.Lowest.Name, a.Lowest.Cost/fixedAtTarget.Cost, fixedAtTarget.Name)
	}
	// each fixed pool's figures are replay.Simulate's on those days
	ds := days(h, "code", day, time.UTC)
	checked := 0
	for _, o := range a.Outcomes {
		if o.policy.Fixed == 0 {
			continue
		}
		var cost float64
		for i, d := range ds {
			cost += replay.Simulate(d, replay.Policy{Fixed: o.policy.Fixed}, p.loop(), uint64(i+1)).NodeSeconds / float64(len(ds))
		}
		assert.InDelta(t, cost, o.Cost, 1e-9, o.Name)
		checked++
	}
	require.Positive(t, checked, "no fixed pool was replayed")
	assert.NotEmpty(t, a.Recommended.Commands())
	assert.Contains(t, a.Verdict, a.Recommended.Name)
}

// The command prints each setting, the verdict and the lines to set; for several pools, each
// pool's entry of the pools list.
func TestRunPrintsTheAdvice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.csv")
	text := historyOf(t, "code", 20*time.Minute, dayTraces(21, 22)...)
	text += strings.TrimPrefix(historyOf(t, "browser", 20*time.Minute, dayTraces(23)...), "pool,claim,created,deleted\n")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	var out, errOut bytes.Buffer
	plots := filepath.Join(dir, "plots")
	code := Main([]string{"--history", path, "--day", "20m", "--node-price-per-hour", "0.0765", "--json", filepath.Join(dir, "a.json"), "--plots", plots, "--current", "fixed-20"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	s := out.String()
	for _, want := range []string{"pool browser:", "pool code:", "fixed-1", "claims + headroom ", "arrivals, rounded to 8 per node", "<- recommended", "now: fixed-20: ", "verdict:", `its entry of the pools list: {"`, `"name":"code"`,
		"$ per day", "($ per day at $0.0765 a node-hour: your --node-price-per-hour)"} {
		assert.Contains(t, s, want)
	}
	// --node-price-per-hour 0: node-seconds only
	out.Reset()
	require.Equal(t, 0, Main([]string{"--history", path, "--day", "20m", "--node-price-per-hour", "0"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "node-s/day")
	assert.NotContains(t, out.String(), "$ per day")
	// the plots: two PNGs per pool, named in the output
	for _, pool := range []string{"browser", "code"} {
		for _, what := range []string{"settings", "busiest-day"} {
			path := filepath.Join(plots, pool+"-"+what+".png")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")), "%s is not a PNG", path)
			assert.Contains(t, s, "wrote "+path)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "a.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"Pool": "browser"`)
}

// Bad input: a clear message on stderr, nothing on stdout, no file written.
func TestRunRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "h.csv")
	require.NoError(t, os.WriteFile(good, []byte(historyOf(t, "code", time.Hour, dayTraces(1)...)), 0o644))
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("claim,created,deleted\nc1,2026-12-01T08:00:30Z,2026-12-01T08:00:00Z\n"), 0o644))
	long := filepath.Join(dir, "long.csv")
	require.NoError(t, os.WriteFile(long, []byte("claim,created,deleted\nc1,2026-12-01T08:00:00Z,2026-12-03T08:00:00Z\n"), 0o644))
	// A loopback port nothing listens on: the Prometheus there is unreachable. The kernel's pick,
	// closed at once: the tests' port picker (freeport) is in the control plane's module, which
	// the product's does not require, and no server is started here.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	nobody := "http://" + closed
	from, to := "2026-12-01T08:00:00Z", "2026-12-01T09:00:00Z"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "--history FILE is required"},
		{[]string{"--history", filepath.Join(dir, "absent.csv")}, 1, "no such file"},
		{[]string{"--history", bad}, 1, "line 2: deleted 2026-12-01T08:00:00Z is before created"},
		{[]string{"--history", good, "--warm-hit-target", "99"}, 2, "--warm-hit-target is 99; a share in (0.5, 1)"},
		{[]string{"--history", good, "--sandboxes-per-node", "-1"}, 2, "--sandboxes-per-node is -1"},
		{[]string{"--history", good, "--boot-seconds", "0"}, 2, "--boot-seconds is 0"},
		{[]string{"--history", good, "--day", "1s"}, 2, "--day is 1s"},
		{[]string{"--history", good, "--margin", "1.5"}, 2, "--margin is 1.5"},
		{[]string{"--history", good, "--timezone", "Mars/Olympus"}, 2, `--timezone: "Mars/Olympus" is not an IANA time zone name such as UTC or Europe/Berlin`},
		{[]string{"--history", good, "--timezone", "Local"}, 2, `--timezone: "Local" is not an IANA time zone name`},
		{[]string{"--history", good, "--timezone", "Europe/Berlin", "--day", "12h"}, 2, "--timezone Europe/Berlin cuts the days at its midnight, so it needs --day 24h (it is 12h0m0s)"},
		{[]string{"--history", good, "--current", "fixed 30"}, 2, `--current "fixed 30" is no setting advise knows; name it as advise prints it, e.g. "fixed-3"`},
		{[]string{"--history", good, "--plots", good}, 2, "--plots " + good + " is not a directory"},
		{[]string{"--history", good, "extra"}, 2, `"extra" is not a flag`},
		{[]string{"--history", good, "--max-claim-duration", "0s"}, 2, "--max-claim-duration and --max-history-span: the longest claim must be above 0"},
		{[]string{"--history", long}, 1, `line 2: claim "c1" was held 48h0m0s, longer than the longest a claim may be (24h0m0s)`},
		{[]string{"--history", good, "--max-claim-duration", "1s"}, 1, "longer than the longest a claim may be (1s)"},
		// the Prometheus source
		{[]string{"--history", good, "--prometheus", nobody}, 2, "--history and --prometheus are two sources of the history; give one of them"},
		{[]string{"--history", good, "--from", from}, 2, "--from goes with --prometheus, not --history"},
		{[]string{"--history", good, "--pools", "code"}, 2, "--pools goes with --prometheus"},
		{[]string{"--prometheus", "prometheus:9090", "--from", from, "--to", to}, 2, `--prometheus: "prometheus:9090" is not a Prometheus URL`},
		{[]string{"--prometheus", nobody, "--to", to}, 2, "--prometheus needs --from, an RFC 3339 time"},
		{[]string{"--prometheus", nobody, "--from", from}, 2, "--prometheus needs --to"},
		{[]string{"--prometheus", nobody, "--from", "yesterday", "--to", to}, 2, `--from "yesterday" is not an RFC 3339 time`},
		{[]string{"--prometheus", nobody, "--from", from, "--to", from}, 2, "the range 2026-12-01T08:00:00Z to 2026-12-01T08:00:00Z is empty"},
		{[]string{"--prometheus", nobody, "--from", to, "--to", from}, 2, "is empty: the end must be after the start"},
		{[]string{"--prometheus", nobody, "--from", from, "--to", to, "--step", "500ms"}, 2, "the step is 500ms; it must be at least 1s"},
		{[]string{"--prometheus", nobody, "--from", from, "--to", to, "--pools", "code,"}, 2, "a pool name is empty"},
		{[]string{"--prometheus", nobody, "--from", from, "--to", to}, 1, "cannot reach the Prometheus at " + nobody},
	} {
		var out, errOut bytes.Buffer
		jsonPath := filepath.Join(dir, "refused.json")
		code := Main(append(c.args, "--json", jsonPath), &out, &errOut)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut.String())
		assert.Contains(t, errOut.String(), c.want, "%v", c.args)
		assert.Empty(t, out.String(), "%v", c.args)
		assert.NoFileExists(t, jsonPath, "%v", c.args)
	}
}

// sampleHistory is the history shipped beside the command, so a newcomer can run advise without
// a cluster: `go run ./advise --history advise/sample-history.csv`.
const sampleHistory = "../sample-history.csv"

// sampleDays are its days: 14 whole days (seeds 101..114) of a team's working-day demand, the
// load-scaled day's shape on a 24 h clock: a claim every 10 minutes or so at night, one every
// 20 s at midday, bursts of 2 (at night) to 10 (at the peak) every hour at night and every 4
// minutes at the peak, sessions of about 90 s (20 s to 20 minutes).
func sampleDays() []*replay.Trace {
	var out []*replay.Trace
	for seed := uint64(101); seed <= 114; seed++ {
		p := replay.DayParams{ArrivalParams: replay.ArrivalParams{Seed: seed, Duration: 24 * time.Hour,
			BurstMin: 2, BurstMax: 2, BurstSpread: time.Second,
			LifetimeMedian: 90 * time.Second, LifetimeSigma: 0.7, LifetimeMin: 20 * time.Second, LifetimeMax: 20 * time.Minute},
			NightFraction: 0.5, TroughGapMean: 10 * time.Minute, PeakGapMean: 20 * time.Second,
			TroughBurstGapMean: time.Hour, PeakBurstGapMean: 4 * time.Minute, PeakBurstMax: 10}
		tr, err := replay.GenerateLoadDay(p)
		if err != nil {
			panic(err)
		}
		out = append(out, tr)
	}
	return out
}

// The shipped sample is what its generator writes (rewrite it with ADVISE_WRITE_SAMPLE=1).
func TestSampleHistoryIsItsGeneratorsDays(t *testing.T) {
	want := historyOf(t, "code", 24*time.Hour, sampleDays()...)
	if os.Getenv("ADVISE_WRITE_SAMPLE") == "1" {
		require.NoError(t, os.WriteFile(sampleHistory, []byte(want), 0o644))
	}
	got, err := os.ReadFile(sampleHistory)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "advise/sample-history.csv is not its generator's output; ADVISE_WRITE_SAMPLE=1 go test ./advise/advisor rewrites it")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, Main([]string{"--history", sampleHistory}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "settings:\n    pulumi config set --path 'minReplicas'")
	assert.Contains(t, out.String(), "($ per day at $0.1714 a node-hour: a c6a.xlarge on demand in us-east-1 with EKS Auto Mode's fee", "money by default")
}

// Every setting advise searches is one the program takes (its own validation, under mocks), and
// the check can refuse: a setting beyond the program's bounds is refused with its message.
func TestEverySettingIsOneTheProgramTakes(t *testing.T) {
	p := DefaultParams()
	berlin := DefaultParams()
	berlin.Timezone = "Europe/Berlin"
	for _, l := range append(ladders(p, 20), scheduleLadder(p, 20, arrivalsSizing(p), BusyWindows{{Start: 8, End: 20}}, 2),
		scheduleLadder(p, 20, arrivalsSizing(p), BusyWindows{{Start: 7, End: 10}, {Start: 17, End: 21}}, 0),
		scheduleLadder(berlin, 20, arrivalsSizing(berlin), BusyWindows{{Start: 9, End: 18}}, 1)) {
		for _, level := range []int{0, 1, l.Levels - 1} { // the bottom, a headroom, the top
			c := l.At(level)
			require.NoError(t, c.accepted(), c.Name)
		}
	}
	bad := Candidate{Name: "too many per node", Config: []Setting{set("sizing.policy", "arrivals"), set("sizing.sandboxesPerNode", 200)}}
	err := bad.accepted()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sizing.sandboxesPerNode is 200")
}

// A day without a claim is left out and said (judged, it passes the target for any pool); a
// claim held longer than a day is said, with its line.
func TestEmptyDaysAndLongClaimsAreSaid(t *testing.T) {
	const day = 20 * time.Minute
	trs := dayTraces(31, 32)
	gap := &replay.Trace{Duration: day} // the record's gap: no claim
	text := historyOf(t, "code", day, trs[0], gap, trs[1])
	long := epoch.Add(3 * day).Add(-time.Minute)
	text += fmt.Sprintf("code,held-long,%s,%s\n", long.Format(time.RFC3339), long.Add(2*day).Format(time.RFC3339))
	a := adviseOn(t, text, day)
	assert.Equal(t, 2, a.Days, "the empty day is not judged")
	caveats := strings.Join(a.Caveats, "\n")
	assert.Contains(t, caveats, "1 of 3 days have no claim (day 2 from the first)")
	assert.Contains(t, caveats, "1 claim(s) held longer than a day (the longest 40m0s, line ")
	assert.NotContains(t, caveats, "still held when the history ends")
}

// Claims still held when the history ends are named with their lines: the replay holds them to
// the end, which a missed deletion turns into a pool held up for the rest of the history.
func TestClaimsHeldAtTheEndAreNamed(t *testing.T) {
	const day = 20 * time.Minute
	text := historyOf(t, "code", day, dayTraces(31, 32)...)
	open := epoch.Add(time.Minute)
	text += fmt.Sprintf("code,open-1,%s,\ncode,open-2,%s,\n", open.Format(time.RFC3339), open.Add(time.Minute).Format(time.RFC3339))
	lines := strings.Count(text, "\n")
	assert.Contains(t, strings.Join(adviseOn(t, text, day).Caveats, "\n"),
		fmt.Sprintf("2 claim(s) still held when the history ends (line %d, %d): the replay holds each to the end", lines-1, lines))
}

// adviseOn reads a history's text and advises its one pool at the default parameters, days of
// day.
func adviseOn(t *testing.T, text string, day time.Duration) PoolAdvice {
	t.Helper()
	h, err := history.Read(strings.NewReader(text), "h.csv")
	require.NoError(t, err)
	p := DefaultParams()
	p.Day = day
	advice, err := Advise(h, p)
	require.NoError(t, err)
	return advice[0]
}

// --help documents both sources and the Prometheus' flags.
func TestHelpDocumentsBothSources(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, Main([]string{"--help"}, &out, &errOut))
	for _, want := range []string{"advise --history FILE", "advise --prometheus URL --from T --to T", "-prometheus string", "-pools string", "-from string", "-to string", "-step duration", "(default 15s)", "good to one --step", "advise replays a team's claim history", "Examples:", "go run ./advise --history claims.csv"} {
		assert.Contains(t, errOut.String(), want)
	}
}

// The margin passes over a raise that misses the target (node packing and the boots drawn make
// a level's days not quite monotone) and goes on up to its cost cap: a ladder whose first raise
// misses every day, whose second reaches the target within the cap and whose third is over it.
func TestMarginPassesOverARaiseThatMisses(t *testing.T) {
	ds := dayTraces(21, 22)
	p := DefaultParams()
	p.Day = ds[0].Duration
	loop := p.loop()
	need := 0
	for n := 1; need == 0; n++ {
		require.Less(t, n, 200, "no fixed pool reaches the target")
		if replayDays(fixed(n), ds, p, loop).DaysAtTarget == len(ds) {
			need = n
		}
	}
	sizes := []int{need, 1, need + 2, need + 40}
	l := stamped(Ladder{Name: "sizes", Levels: len(sizes), At: func(i int) Candidate { return fixed(sizes[i]) }})
	costCap := replayDays(fixed(need+2), ds, p, loop).Cost
	raised, k := raiseByMargin(l, 0, ds, p, loop, len(ds), costCap)
	require.Equal(t, 2, k, "raised by %d, want 2 (%s passed over, %s over the cap)", k, l.At(1).Name, l.At(3).Name)
	require.Len(t, raised, 1)
	assert.Equal(t, fixed(need+2).Name, raised[0].Name)
	assert.True(t, raised[0].Margin)
}
