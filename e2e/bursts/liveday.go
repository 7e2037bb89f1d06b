package bursts

// The live day (BenchmarkLiveDay, liveday_bench_test.go) replays compressed days on the local
// control plane, each setting's pool on a Karpenter NodePool of its own, beside the model's
// replay (package replay) of the very claims the harness created, at the times it created and
// deleted them. What needs no cluster is here: each setting's program config and model policy,
// the history advise reads, the trace of what was really created, and the verdict on each row.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// How far the live day and the model may part on one row (a family, a seed, a setting): every
// row, never the mean.
const (
	LiveDayWarmPoints = 1.5             // warm hits, in percentage points
	LiveDayNodeShare  = 0.10            // node-seconds, as a share of the live figure
	LiveDayWaitP95    = 2 * time.Second // the claims' wait, 95th percentile
)

// AdviceSetting is one config key as advise prints it (a `pulumi config set --path` key) and
// its value.
type AdviceSetting struct{ Key, Value string }

// LiveSetting is one pool setting of the live day.
type LiveSetting struct {
	// Name is short, for the namespace and the NodePool: advised, fixed, rounded.
	Name string
	// What is the setting as advise names it ("claims + headroom 3", "fixed-12").
	What string
	// Config are its keys, as advise prints them.
	Config []AdviceSetting
}

// Fixed is the size of a fixed pool (minReplicas = maxReplicas, nothing that sizes it by
// demand), 0 for an autoscaled one.
func (s LiveSetting) Fixed() int {
	m := s.values()
	if m["headroom"] != "" || m["sizing.policy"] != "" || m["minReplicas"] != m["maxReplicas"] {
		return 0
	}
	n, _ := strconv.Atoi(m["minReplicas"])
	return n
}

func (s LiveSetting) values() map[string]string {
	m := map[string]string{}
	for _, c := range s.Config {
		m[c.Key] = c.Value
	}
	return m
}

// ProgramConfig is the setting as the program's config (Render's map): the `sizing.*` keys
// become the `sizing` object, numbers as numbers, as Pulumi passes structured config.
func (s LiveSetting) ProgramConfig() (map[string]string, error) {
	out := map[string]string{}
	sizing := map[string]any{}
	for _, c := range s.Config {
		key, sub, nested := strings.Cut(c.Key, ".")
		switch {
		case !nested:
			out[key] = c.Value
		case key == SizingKey && !strings.Contains(sub, "."):
			if n, err := strconv.ParseFloat(c.Value, 64); err == nil {
				sizing[sub] = json.Number(strconv.FormatFloat(n, 'f', -1, 64))
			} else {
				sizing[sub] = c.Value
			}
		default:
			return nil, fmt.Errorf("setting %s: key %s: the live day renders top-level keys and %s.* only", s.What, c.Key, SizingKey)
		}
	}
	if len(sizing) > 0 {
		b, err := json.Marshal(sizing)
		if err != nil {
			return nil, err
		}
		out[SizingKey] = string(b)
	}
	return out, nil
}

// ModelPolicy is the setting as the model replays it: the formula the program renders for these
// keys (components' own functions), bounded by [minReplicas, maxReplicas], with the HPA
// behaviour the program renders by default (components.DefaultScaleUp, DefaultScaleDown). A key
// the model does not replay is refused, never ignored.
func (s LiveSetting) ModelPolicy() (replay.Policy, error) {
	m := s.values()
	atoi := func(key string, def int) (int, error) {
		v, ok := m[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("setting %s: %s is %q: want a whole number", s.What, key, v)
		}
		return n, nil
	}
	for key, v := range m {
		switch key {
		case "minReplicas", "maxReplicas", "headroom", "loadCap", "sizing.policy", "sizing.bootSeconds",
			"sizing.warmHitTarget", "sizing.sandboxesPerNode", "sizing.nodeLaunchSeconds":
		case "targetValue":
			if t, err := strconv.ParseFloat(v, 64); err != nil || t != 1 {
				return replay.Policy{}, fmt.Errorf("setting %s: targetValue %s: the live day's model replays targetValue 1 only", s.What, v)
			}
		default:
			return replay.Policy{}, fmt.Errorf("setting %s: key %s: the live day's model does not replay it", s.What, key)
		}
	}
	floor, err := atoi("minReplicas", 1)
	if err != nil {
		return replay.Policy{}, err
	}
	bound, err := atoi("maxReplicas", 0)
	if err != nil {
		return replay.Policy{}, err
	}
	if bound < max(floor, 1) {
		return replay.Policy{}, fmt.Errorf("setting %s: maxReplicas %d: want at least minReplicas (%d) and 1", s.What, bound, floor)
	}
	if n := s.Fixed(); n > 0 {
		return replay.Policy{Name: s.What, Fixed: n}, nil
	}
	headroom, err := atoi("headroom", 0)
	if err != nil {
		return replay.Policy{}, err
	}
	p := replay.Policy{Name: s.What, Floor: floor, Max: bound,
		Short: time.Duration(components.DefaultShortWindowSeconds) * time.Second, Long: time.Duration(components.DefaultLongWindowSeconds) * time.Second,
		ScaleUp: components.DefaultScaleUp(), ScaleDown: components.DefaultScaleDown()}
	switch m["sizing.policy"] {
	case "":
		p.Desired = func(d replay.Demand) float64 { return float64(d.Held + headroom) }
	case components.SizingArrivals:
		sz := components.Sizing{Policy: components.SizingArrivals, BootSeconds: components.DefaultBootSeconds, HPASyncSeconds: components.DefaultHPASyncSeconds,
			WarmHitTarget: components.DefaultWarmHitTarget, ShortWindowSeconds: components.DefaultShortWindowSeconds, LongWindowSeconds: components.DefaultLongWindowSeconds, SandboxesPerNode: 1}
		for key, dst := range map[string]*int{"sizing.bootSeconds": &sz.BootSeconds, "sizing.sandboxesPerNode": &sz.SandboxesPerNode, "sizing.nodeLaunchSeconds": &sz.NodeLaunchSeconds} {
			if *dst, err = atoi(key, *dst); err != nil {
				return replay.Policy{}, err
			}
		}
		if v, ok := m["sizing.warmHitTarget"]; ok {
			if sz.WarmHitTarget, err = strconv.ParseFloat(v, 64); err != nil {
				return replay.Policy{}, fmt.Errorf("setting %s: sizing.warmHitTarget is %q: want a number", s.What, v)
			}
		}
		p.Desired = func(d replay.Demand) float64 {
			return components.ArrivalsDesired(sz, headroom, float64(d.Held), float64(d.ArrivalsShort), float64(d.ArrivalsLong), 0)
		}
	default:
		return replay.Policy{}, fmt.Errorf("setting %s: sizing.policy %q: the live day's model replays %q only", s.What, m["sizing.policy"], components.SizingArrivals)
	}
	return p, nil
}

// WriteAdviseHistory writes traces as one pool's claim history in advise's CSV (pool, claim,
// created, deleted; RFC 3339): trace i is day i from start, which must fall on a multiple of
// day (advise cuts days there), so each trace is one of the days advise judges.
func WriteAdviseHistory(w io.Writer, pool string, start time.Time, day time.Duration, traces []*replay.Trace) error {
	if !start.Equal(start.Truncate(day)) {
		return fmt.Errorf("the history's start %s is not on a multiple of its day (%s): advise would cut the days elsewhere", start.Format(time.RFC3339), day)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"pool", "claim", "created", "deleted"}); err != nil {
		return err
	}
	for i, tr := range traces {
		if tr.Duration > day {
			return fmt.Errorf("trace %s runs %s, longer than a day of %s", tr.Name, tr.Duration, day)
		}
		dayStart := start.Add(time.Duration(i) * day)
		for j, a := range tr.Arrivals {
			created := dayStart.Add(a.At)
			if err := cw.Write([]string{pool, fmt.Sprintf("d%d-c%d", i+1, j+1), created.Format(time.RFC3339Nano), created.Add(a.Lifetime).Format(time.RFC3339Nano)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// adviceJSON is the part of advise's --json the live day reads.
type adviceJSON struct {
	Pool        string
	Need        int
	Outcomes    []adviceOutcome
	Recommended *adviceOutcome
}

type adviceOutcome struct {
	Name         string
	Config       []AdviceSetting
	Ladder       string
	Level        int
	DaysAtTarget int
	Cost         float64
}

// ReadAdvice reads advise's --json for one pool: its recommendation, and the fixed pool it is
// compared with (the smallest fixed size that reaches the target on the days the
// recommendation must). When advise recommends that fixed pool, or a setting with a schedule
// (KEDA's cron windows follow the wall clock, which a compressed day does not), the first setting
// is instead advise's cheapest autoscaled one at the target without a schedule (or, if none
// reaches it, the one on most days), so the live day still holds a setting of advise's to the
// model.
func ReadAdvice(b []byte) (recommended, fixed LiveSetting, err error) {
	var pools []adviceJSON
	if err := json.Unmarshal(b, &pools); err != nil {
		return recommended, fixed, fmt.Errorf("advise's --json: %w", err)
	}
	if len(pools) != 1 {
		return recommended, fixed, fmt.Errorf("advise's --json has %d pools: want the one the history holds", len(pools))
	}
	a := pools[0]
	if a.Recommended == nil {
		return recommended, fixed, fmt.Errorf("advise recommended nothing for pool %s (no setting reached the target on %d days)", a.Pool, a.Need)
	}
	var best *adviceOutcome
	for i, o := range a.Outcomes {
		if o.Ladder == "fixed" && o.DaysAtTarget >= a.Need && (best == nil || o.Level < best.Level) {
			best = &a.Outcomes[i]
		}
	}
	if best == nil {
		return recommended, fixed, fmt.Errorf("advise replayed no fixed pool that reaches the target on %d days", a.Need)
	}
	recommended = LiveSetting{Name: "advised", What: a.Recommended.Name, Config: a.Recommended.Config}
	fixed = LiveSetting{Name: "fixed", What: best.Name, Config: best.Config}
	if a.Recommended.Ladder != "fixed" && !scheduled(*a.Recommended) {
		return recommended, fixed, nil
	}
	var auto *adviceOutcome
	for i, o := range a.Outcomes {
		if o.Ladder == "fixed" || scheduled(o) {
			continue
		}
		if auto == nil || o.DaysAtTarget > auto.DaysAtTarget || o.DaysAtTarget == auto.DaysAtTarget && o.Cost < auto.Cost {
			auto = &a.Outcomes[i]
		}
	}
	if auto == nil {
		return recommended, fixed, fmt.Errorf("advise recommends %s and replayed no autoscaled setting", a.Recommended.Name)
	}
	return LiveSetting{Name: "autoscaled", What: auto.Name, Config: auto.Config}, fixed, nil
}

// scheduled reports whether an outcome's setting has a schedule window.
func scheduled(o adviceOutcome) bool {
	for _, c := range o.Config {
		if strings.HasPrefix(c.Key, SizingKey+".schedule") {
			return true
		}
	}
	return false
}

// LiveTrace is what the harness really did, as a trace the model replays: each claim created at
// its create request's time from start and deleted at its delete request's. A claim the harness
// created but never deleted is refused: the model would hold it forever.
func LiveTrace(name string, duration time.Duration, claims []ClaimResult, start time.Time) (*replay.Trace, error) {
	tr := &replay.Trace{Name: name, Duration: duration}
	for _, c := range byCreation(claims) {
		if c.Deleted.IsZero() {
			return nil, fmt.Errorf("claim %s was created at %s and never deleted: the trace has no end for it", c.Name, c.Created.Format(time.RFC3339Nano))
		}
		tr.Arrivals = append(tr.Arrivals, replay.Arrival{At: c.Created.Sub(start), Lifetime: c.Deleted.Sub(c.Created)})
	}
	return tr, nil
}

// ClaimOutcome is what one live claim found: a warm sandbox or a cold one, and its create to
// Ready as the client saw it (Ready false: deleted before; Wait its whole life).
type ClaimOutcome struct {
	Warm  bool          `json:"warm"`
	Ready bool          `json:"ready"`
	Wait  time.Duration `json:"wait"`
}

// byCreation is a copy of claims in the order they were created (LiveTrace's).
func byCreation(claims []ClaimResult) []ClaimResult {
	sorted := append([]ClaimResult(nil), claims...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Created.Before(sorted[j].Created) })
	return sorted
}

// LiveOutcomes are the claims' outcomes in LiveTrace's order (by creation).
func LiveOutcomes(claims []ClaimResult) []ClaimOutcome {
	sorted := byCreation(claims)
	out := make([]ClaimOutcome, len(sorted))
	for i, c := range sorted {
		out[i] = ClaimOutcome{Warm: c.LaunchType == "warm", Wait: c.Deleted.Sub(c.Created)}
		if l, ok := c.Latency(); ok {
			out[i].Ready, out[i].Wait = true, l
		}
	}
	return out
}

// LiveFigures are one side of a row: what the cluster counted, or what the model predicts.
type LiveFigures struct {
	Warm        float64 // % of claims that found a warm sandbox
	NodeSeconds float64
	WaitP95     time.Duration
	NeverReady  int
}

// LiveClaimFigures are the live side's warm hits and waits: warm when agent-sandbox labelled the
// claim's sandbox warm; the wait is create to Ready as the client saw it, and a claim never
// Ready waited its whole life (the model's convention).
func LiveClaimFigures(claims []ClaimResult) LiveFigures {
	var f LiveFigures
	outcomes := LiveOutcomes(claims)
	waits := make([]time.Duration, len(outcomes))
	warm := 0
	for i, o := range outcomes {
		if o.Warm {
			warm++
		}
		if !o.Ready {
			f.NeverReady++
		}
		waits[i] = o.Wait
	}
	if len(outcomes) > 0 {
		f.Warm = 100 * float64(warm) / float64(len(outcomes))
	}
	f.WaitP95 = replay.Percentile(waits, 95)
	return f
}

// ModelFigures are the model's side of a row.
func ModelFigures(r replay.Result) LiveFigures {
	return LiveFigures{Warm: 100 * r.WarmShare(), NodeSeconds: r.NodeSeconds, WaitP95: replay.Percentile(r.Waits, 95), NeverReady: r.NeverReady}
}

// LiveDayRow is one setting on one day, live beside the model.
type LiveDayRow struct {
	Family  string
	Seed    uint64
	Setting LiveSetting
	Claims  int
	Live    LiveFigures
	Model   LiveFigures
}

// Disagreements are the figures of the row that part beyond the tolerances, each saying by how
// much; none when the row agrees.
func (r LiveDayRow) Disagreements() []string {
	var out []string
	if d := math.Abs(r.Live.Warm - r.Model.Warm); d > LiveDayWarmPoints {
		out = append(out, fmt.Sprintf("warm hits %.1f%% live, %.1f%% model (%.1f points apart, tolerance %.1f)", r.Live.Warm, r.Model.Warm, d, LiveDayWarmPoints))
	}
	if r.Live.NodeSeconds <= 0 {
		out = append(out, "no live node-seconds: the NodePool's NodeClaims were never read")
	} else if d := math.Abs(r.Model.NodeSeconds-r.Live.NodeSeconds) / r.Live.NodeSeconds; d > LiveDayNodeShare {
		out = append(out, fmt.Sprintf("node-seconds %.0f live, %.0f model (%.1f%% apart, tolerance %.0f%%)", r.Live.NodeSeconds, r.Model.NodeSeconds, 100*d, 100*LiveDayNodeShare))
	}
	if d := r.Live.WaitP95 - r.Model.WaitP95; d > LiveDayWaitP95 || -d > LiveDayWaitP95 {
		out = append(out, fmt.Sprintf("claim wait p95 %.1f s live, %.1f s model (tolerance %.0f s)", r.Live.WaitP95.Seconds(), r.Model.WaitP95.Seconds(), LiveDayWaitP95.Seconds()))
	}
	return out
}

// LiveDayTable is the rows as a Markdown table, live beside model, with each row's verdict.
func LiveDayTable(rows []LiveDayRow) string {
	var b strings.Builder
	b.WriteString("| family | seed | setting | claims | warm hits live / model | node-s live / model | wait p95 live / model | never Ready live / model | agrees |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		verdict := "yes"
		if d := r.Disagreements(); len(d) > 0 {
			verdict = "**no**: " + strings.Join(d, "; ")
		}
		fmt.Fprintf(&b, "| %s | %d | %s (%s) | %d | %.1f%% / %.1f%% | %.0f / %.0f | %.1f s / %.1f s | %d / %d | %s |\n",
			r.Family, r.Seed, r.Setting.Name, r.Setting.What, r.Claims, r.Live.Warm, r.Model.Warm,
			r.Live.NodeSeconds, r.Model.NodeSeconds, r.Live.WaitP95.Seconds(), r.Model.WaitP95.Seconds(), r.Live.NeverReady, r.Model.NeverReady, verdict)
	}
	return b.String()
}
