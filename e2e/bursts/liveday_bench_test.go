package bursts

// BenchmarkLiveDay holds the model to the live loop over whole compressed days: each family's
// days (all its seeds) replayed at once on a local control plane of its own with the real KEDA, HPA,
// agent-sandbox, exporter and Karpenter (its KWOK provider, with EKS Auto Mode's launch delay
// and consolidateAfter as the model takes them), each setting's pool in a namespace and on a
// NodePool of its own so its node-seconds stay apart. Per family, three settings: advise's
// recommendation for the family (advise run on the family's days 1..N, not the days replayed
// here), the fixed pool advise compares it with, and the arrivals policy rounded to whole nodes.
// Each row prints what the cluster counted (agent-sandbox's launch type, each claim's create to
// Ready, node-seconds from the NodeClaims) beside the model's replay of the claims the harness
// really created, when it created and deleted them, and says where they part beyond the
// tolerances (liveday.go). It is a measurement: nothing in it asserts a figure.
//
//	go test -C e2e -run '^$' -bench LiveDay -benchtime 1x -timeout 90m ./bursts
//
// Knobs:
//
//	LIVEDAY_FAMILIES=day,burst   the trace families (default both)
//	LIVEDAY_SEEDS=20260513,1001  the days replayed live, per family (default the published seed and an unseen one)
//	LIVEDAY_ADVISE_DAYS=14       advise's history: the family's seeds 1..N
//	LIVEDAY_DURATION=5m          cut the replayed days to this long (a smoke run; advise still reads whole days)
//	LIVEDAY_PLOTS=dir            where the timeline goes (default the repository's docs/; "off": none)
//	LIVEDAY_RECORD=path          where the day's record goes (default testdata/liveday-record.json; "off": none),
//	                             for BenchmarkRecordedLiveDay to hold the model to it again without a cluster
//	LIVEDAY_LOGS=dir             keep each family's control plane logs in dir/<family>, with Karpenter at debug
//	                             level (its decisions) and kube-scheduler at --v=5 (each attempt, each queue move)
//	LIVEDAY_SCHEDULER_LOG=path   (BenchmarkRecordedLiveDay) read who took each freed slot in a kube-scheduler log
//	                             kept with LIVEDAY_LOGS (SchedulerLogChoices)
//	LIVEDAY_SCHEDULER=first-come judge with the model's scheduler binding first come, first bound, not with
//	                             kube-scheduler's pod backoff (replay.SchedulerBackoff, the default)

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The live day's nodes: EKS Auto Mode as the model takes it (replay.GoalNodes: D = 45 s,
// consolidateAfter 30 s), on one instance type whose slots for the code interpreter's sandbox
// (karpenterSandboxRequests) are K.
const (
	liveDayLaunchDelay      = 45 * time.Second
	liveDayConsolidateAfter = 30 * time.Second
	liveDayInstanceType     = "c6a.xlarge"
	// liveDaySettingLabel keeps each setting's sandboxes on its own NodePool's nodes.
	liveDaySettingLabel = "warmpool.local/liveday-setting"
)

// liveDayConfig is what the environment asks of one run.
type liveDayConfig struct {
	families   []string
	seeds      []uint64
	adviseDays int
	cut        time.Duration
	plots      string
	record     string
	logs       string
	// firstCome judges a record with the model's scheduler binding first come, first bound
	// (LIVEDAY_SCHEDULER=first-come), not with kube-scheduler's pod backoff.
	firstCome bool
}

func loadLiveDayConfig(getenv func(string) string) (*liveDayConfig, error) {
	cfg := &liveDayConfig{families: []string{replay.TraceDay, replay.TraceBurst}, seeds: []uint64{20260513, 1001}, adviseDays: 14}
	var errs []error
	if v := getenv("LIVEDAY_FAMILIES"); v != "" {
		cfg.families = nil
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f != replay.TraceDay && f != replay.TraceBurst {
				errs = append(errs, fmt.Errorf("LIVEDAY_FAMILIES: unknown family %q (want %s, %s or both)", f, replay.TraceDay, replay.TraceBurst))
			}
			cfg.families = append(cfg.families, f)
		}
	}
	if v := getenv("LIVEDAY_SEEDS"); v != "" {
		cfg.seeds = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil || n == 0 {
				errs = append(errs, fmt.Errorf("LIVEDAY_SEEDS: %q is not a seed (a whole number above 0)", s))
			}
			cfg.seeds = append(cfg.seeds, n)
		}
	}
	if v := getenv("LIVEDAY_ADVISE_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("LIVEDAY_ADVISE_DAYS=%q: want a whole number of days, at least 1", v))
		}
		cfg.adviseDays = n
	}
	for _, s := range cfg.seeds {
		if s >= 1 && s <= uint64(cfg.adviseDays) {
			errs = append(errs, fmt.Errorf("LIVEDAY_SEEDS: seed %d is one of advise's days (1..%d): the live day must replay days advise has not seen", s, cfg.adviseDays))
		}
	}
	if v := getenv("LIVEDAY_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			errs = append(errs, fmt.Errorf("LIVEDAY_DURATION=%q: want a duration of at least 1m", v))
		}
		cfg.cut = d
	}
	switch v := getenv("LIVEDAY_PLOTS"); v {
	case "off":
	case "":
		cfg.plots = filepath.Join("..", "..", "docs")
	default:
		cfg.plots = v
	}
	switch v := getenv("LIVEDAY_RECORD"); v {
	case "off":
	case "":
		cfg.record = filepath.Join("testdata", "liveday-record.json")
	default:
		cfg.record = v
	}
	cfg.logs = getenv("LIVEDAY_LOGS")
	switch v := getenv("LIVEDAY_SCHEDULER"); v {
	case "", "backoff":
	case "first-come":
		cfg.firstCome = true
	default:
		errs = append(errs, fmt.Errorf("LIVEDAY_SCHEDULER=%q: want backoff (kube-scheduler's pod backoff, the default) or first-come (first come, first bound)", v))
	}
	return cfg, errors.Join(errs...)
}

// familyTrace is the family's day of seed, cut to cut when cut > 0.
func familyTrace(family string, seed uint64, cut time.Duration) (*replay.Trace, error) {
	switch family {
	case replay.TraceDay:
		p := replay.DefaultDayParams()
		p.Seed = seed
		if cut > 0 {
			p.Duration = min(p.Duration, cut)
		}
		return replay.GenerateDay(p)
	case replay.TraceBurst:
		p := replay.DefaultTraceParams()
		p.Seed = seed
		if cut > 0 {
			p.Duration = min(p.Duration, cut)
		}
		return replay.GenerateTrace(p)
	}
	return nil, fmt.Errorf("unknown trace family %q", family)
}

// liveDayNodes is the live day's one instance type and the K sandboxes a node of it holds.
func liveDayNodes() (localcluster.InstanceType, int, error) {
	for _, it := range localcluster.DefaultInstanceTypes {
		if it.Name == liveDayInstanceType {
			k, err := slotsPerNode(karpenterSandboxRequests, it)
			return it, k, err
		}
	}
	return localcluster.InstanceType{}, 0, fmt.Errorf("no instance type %s among the control plane's", liveDayInstanceType)
}

// liveDayRun is one day of one family: its trace and its three settings.
type liveDayRun struct {
	family   string
	seed     uint64
	trace    *replay.Trace
	settings []LiveSetting
	policies []Policy // the settings as the benchmark's policies (namespace, config), same order
	models   []replay.Policy
}

func BenchmarkLiveDay(b *testing.B) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		b.Skipf("%s=1: the local control plane was not started; nothing measured", localcluster.SkipEnv)
	}
	cfg, err := loadLiveDayConfig(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	itype, k, err := liveDayNodes()
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "liveday: %s holds K=%d sandboxes of %v; D=%s, consolidateAfter %s\n", itype.Name, k, karpenterSandboxRequests, liveDayLaunchDelay, liveDayConsolidateAfter)

	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "liveday-")
	if err != nil {
		b.Fatal(err)
	}
	adviseBin, err := framework.GoBuild(prefixed("liveday"), work, framework.Module+"/advise")
	if err != nil {
		b.Fatal(err)
	}
	var runs []*liveDayRun
	for _, family := range cfg.families {
		advised, fixed, err := adviseFamily(ctx, adviseBin, work, family, cfg.adviseDays, k)
		if err != nil {
			b.Fatal(err)
		}
		rounded := roundedSetting(advised, k)
		fmt.Fprintf(os.Stderr, "liveday: %s family: %s %s %v; the fixed pool advise compares with: %s; rounded: %v\n", family, advised.Name, advised.What, advised.Config, fixed.What, rounded.Config)
		for i, seed := range cfg.seeds {
			tr, err := familyTrace(family, seed, cfg.cut)
			if err != nil {
				b.Fatal(err)
			}
			run := &liveDayRun{family: family, seed: seed, trace: tr, settings: []LiveSetting{advised, fixed, rounded}}
			for _, s := range run.settings {
				p, err := liveDayPolicy(s, fmt.Sprintf("live-%s-%d", family, i+1))
				if err != nil {
					b.Fatal(err)
				}
				m, err := s.ModelPolicy()
				if err != nil {
					b.Fatal(err)
				}
				run.policies, run.models = append(run.policies, p), append(run.models, m)
			}
			fmt.Fprintf(os.Stderr, "liveday: %s day, seed %d: %s\n", family, seed, tr.Summary())
			runs = append(runs, run)
		}
	}

	// One family at a time, each on a control plane of its own: the whole control plane shares
	// these 2 cores with the harness, and with both families' 12 pools at once the controllers
	// fell behind where EKS's would not (docs/bursts.md, "The live day").
	var rec LiveDayRecord
	for _, family := range cfg.families {
		var round []*liveDayRun
		for _, run := range runs {
			if run.family == family {
				round = append(round, run)
			}
		}
		logs := ""
		if cfg.logs != "" {
			logs = filepath.Join(cfg.logs, family)
		}
		r := runLiveDay(b, ctx, filepath.Join(work, family), logs, itype, k, round)
		for i := range r.Rows {
			r.Rows[i].Wall = r.Wall
		}
		r.Wall, r.Rows = nil, append(rec.Rows, r.Rows...)
		rec = r
	}
	if !b.Failed() {
		_ = os.RemoveAll(work)
	}
	if cfg.record != "" {
		if err := WriteLiveDayRecord(cfg.record, rec); err != nil {
			b.Errorf("writing the record: %v", err)
		} else {
			fmt.Printf("wrote %s\n", cfg.record)
		}
	}
	judgeLiveDay(b, rec, cfg.plots, cfg.firstCome)
	if cfg.logs != "" {
		for _, family := range cfg.families {
			printSchedulerLogChoices(b, filepath.Join(cfg.logs, family, "kube-scheduler.log"))
		}
	}
}

// printSchedulerLogChoices prints SchedulerLogChoices of the kube-scheduler log at path.
func printSchedulerLogChoices(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Errorf("kube-scheduler's log: %v", err)
		return
	}
	defer f.Close()
	c, err := SchedulerLogChoices(f)
	if err != nil {
		b.Errorf("%s: %v", path, err)
		return
	}
	fmt.Printf("\nWho took each freed slot in kube-scheduler's own log (%s; %d slots a deletion freed with two or more of a namespace's pods pending): "+
		"the rule picks %d (%.0f %%), first come %d (%.0f %%), the newest %d (%.0f %%), a pick at random %.0f (%.0f %%).\n",
		path, c.Slots, c.Backoff, 100*float64(c.Backoff)/float64(max(c.Slots, 1)), c.Oldest, 100*float64(c.Oldest)/float64(max(c.Slots, 1)),
		c.Newest, 100*float64(c.Newest)/float64(max(c.Slots, 1)), c.Chance, 100*c.Chance/float64(max(c.Slots, 1)))
}

// runLiveDay replays the runs' traces at once on one local control plane with Karpenter (one
// instance type, itype, holding k sandboxes), each setting's pool in a namespace and on a
// NodePool of its own, and returns what the cluster did: each row's claims as the harness
// created and deleted them, its figures, its pool's sizes and its nodes.
func runLiveDay(tb testing.TB, ctx context.Context, work, keepLogs string, itype localcluster.InstanceType, k int, runs []*liveDayRun) LiveDayRecord {
	tb.Helper()
	logLevel := 0
	if keepLogs != "" {
		logLevel = 5
	}
	bc := startBenchCluster(tb, ctx, work, keepLogs, localcluster.Options{Nodes: 1, SchedulerLogLevel: logLevel,
		Karpenter: &localcluster.KarpenterOptions{LaunchDelay: liveDayLaunchDelay, ConsolidateAfter: liveDayConsolidateAfter,
			InstanceTypes: []localcluster.InstanceType{itype}, Debug: keepLogs != ""}})
	defer bc.stop()
	c, recorder, exporterBin := bc.c, bc.rec, bc.exporterBin
	exporters := process.NewSet(work, false)
	defer exporters.Stop(5 * time.Second)
	var all []Policy
	taps := map[string]*DemandTap{}
	for _, run := range runs {
		for _, p := range run.policies {
			taps[p.Namespace()] = createLiveDayPolicy(tb, ctx, c, exporters, work, exporterBin, p)
			all = append(all, p)
		}
	}
	for _, p := range all {
		waitPoolReady(tb, ctx, c, p)
	}
	// Two syncs: every HPA has read its exporter and settled its pool at rest, nodes included.
	time.Sleep(2 * replay.HPASyncPeriod)
	for _, p := range all {
		waitPoolReady(tb, ctx, c, p)
	}
	ledgers := map[string]*claimLedger{}
	for _, p := range all {
		ledgers[p.Namespace()] = newClaimLedger()
	}
	stopLedgers := runNodePoolLedgers(ctx, c, ledgers, time.Second)

	if b, ok := tb.(*testing.B); ok {
		b.ResetTimer()
	}
	start := time.Now().Add(2 * time.Second)
	longest := time.Duration(0)
	for _, run := range runs {
		longest = max(longest, run.trace.End())
	}
	stopProgress := progress(ctx, c, all, runs[0].trace, start)
	var wg sync.WaitGroup
	errs := make([][]error, len(runs))
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = replayTrace(ctx, c, recorder, run.trace, run.policies, start)
		}()
	}
	wg.Wait()
	stopProgress()
	for i, e := range errs {
		if len(e) > 0 {
			tb.Fatalf("%s day, seed %d: %d claim requests failed; first: %v", runs[i].family, runs[i].seed, len(e), e[0])
		}
	}
	// Let the last Ready and delete events arrive, and the nodes the last claims held go.
	time.Sleep(3 * time.Second)
	stopLedgers()
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
	}

	rec := LiveDayRecord{Date: time.Now().UTC().Format(time.DateOnly), SlotsPerNode: k, LaunchDelay: liveDayLaunchDelay, ConsolidateAfter: liveDayConsolidateAfter,
		Wall: &replay.WallClock{Offset: start.Sub(start.Truncate(time.Second))}}
	for _, run := range runs {
		for i, p := range run.policies {
			res := recorder.Result(p, start, start.Add(longest))
			live, err := LiveTrace(run.trace.Name, run.trace.Duration, res.Claims, start)
			if err != nil {
				tb.Fatalf("%s: %v", p.Namespace(), err)
			}
			end := max(live.Duration, live.End()) + 100*time.Millisecond
			tl := recorder.Timeline(p, start, start.Add(end))
			nodes := ledgers[p.Namespace()].snapshot()
			row := RecordedRow{Family: run.family, Seed: run.seed, Setting: run.settings[i], Trace: live.Name, Duration: live.Duration,
				Claims: live.Arrivals, Live: LiveClaimFigures(res.Claims), Outcomes: LiveOutcomes(res.Claims), LiveSpec: tl.Spec, LiveNodes: nodeSteps(nodes, start, start.Add(end)),
				LiveReady: tl.Ready, LiveBooting: tl.Booting, LiveBoots: tl.Boots, LivePods: recorder.Pods(p, start, start.Add(end))}
			if len(tl.Spec) > 0 {
				row.InitialScale = int(tl.Spec[0].Value)
			}
			if tap := taps[p.Namespace()]; tap != nil {
				row.Reads = tap.Reads(start, start.Add(end))
			}
			row.Live.NodeSeconds = nodeSecondsWithin(nodes, start, start.Add(end))
			rec.Rows = append(rec.Rows, row)
		}
	}
	return rec
}

// judgeLiveDay prints the record's rows live beside the model's replay of them, with each row's
// verdict, and draws the first autoscaled row's timeline into plots (none when plots is "").
func judgeLiveDay(b *testing.B, rec LiveDayRecord, plots string, firstCome bool) {
	var nodes func(replay.Nodes) replay.Nodes
	if firstCome {
		nodes = func(n replay.Nodes) replay.Nodes {
			n.PodBackoff, n.PodMaxBackoff = 0, 0
			return n
		}
		fmt.Println("the model's scheduler binding first come, first bound (LIVEDAY_SCHEDULER=first-come)")
	}
	rows, results, err := rec.JudgedBy(nodes)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("\n## The live day\n\nK=%d, D=%s, consolidateAfter %s, HPA sync %s; tolerances: warm hits %.1f points, node-seconds %.0f%%, claim wait p95 %.0f s.\n\n",
		rec.SlotsPerNode, rec.LaunchDelay, rec.ConsolidateAfter, replay.HPASyncPeriod, LiveDayWarmPoints, 100*LiveDayNodeShare, LiveDayWaitP95.Seconds())
	fmt.Print(LiveDayTable(rows))
	agree := 0
	for _, r := range rows {
		if len(r.Disagreements()) == 0 {
			agree++
		}
		b.ReportMetric(r.Live.Warm-r.Model.Warm, fmt.Sprintf("%s-%d-%s-warm-pts-apart", r.Family, r.Seed, r.Setting.Name))
	}
	fmt.Printf("\n%d of %d rows agree within the tolerances.\n", agree, len(rows))
	if c := rec.FreedSlotChoices(); c.Slots > 0 {
		fmt.Printf("\nWhich pending pod took a freed slot (%d slots with two or more of the pool's pods pending): "+
			"kube-scheduler's backoff picks %d (%.0f %%), first come %d (%.0f %%), the newest %d (%.0f %%), a pick at random %.0f (%.0f %%).\n",
			c.Slots, c.Backoff, 100*float64(c.Backoff)/float64(c.Slots), c.Oldest, 100*float64(c.Oldest)/float64(c.Slots),
			c.Newest, 100*float64(c.Newest)/float64(c.Slots), c.Chance, 100*c.Chance/float64(c.Slots))
	}
	if plots == "" {
		return
	}
	for i, r := range rec.Rows {
		if r.Setting.Fixed() != 0 {
			continue
		}
		path := filepath.Join(plots, "liveday-timeline.png")
		title := fmt.Sprintf("%s trace, seed %d, %s (%s): live and model", r.Family, r.Seed, r.Setting.Name, r.Setting.What)
		if err := LiveDayPlot(path, title, r.Series(results[i])); err != nil {
			b.Errorf("%v", err)
		} else {
			fmt.Printf("wrote %s\n", path)
		}
		return
	}
}

// BenchmarkRecordedLiveDay holds today's model to a recorded live day (BenchmarkLiveDay's
// record, LIVEDAY_RECORD; default the one committed in testdata) without a cluster, and redraws
// its timeline (LIVEDAY_PLOTS, as BenchmarkLiveDay's):
//
//	go test -C e2e -run '^$' -bench RecordedLiveDay -benchtime 1x ./bursts
func BenchmarkRecordedLiveDay(b *testing.B) {
	cfg, err := loadLiveDayConfig(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	if cfg.record == "" {
		b.Fatal("LIVEDAY_RECORD=off: no record to judge")
	}
	rec, err := ReadLiveDayRecord(cfg.record)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("the live day of %s (%s)\n", rec.Date, cfg.record)
	judgeLiveDay(b, rec, cfg.plots, cfg.firstCome)
	if path := os.Getenv("LIVEDAY_SCHEDULER_LOG"); path != "" {
		printSchedulerLogChoices(b, path)
	}
}

// adviseFamily runs advise on the family's days 1..days (seeds the live day does not replay) and
// reads its recommendation and the fixed pool it compares with.
func adviseFamily(ctx context.Context, bin, work, family string, days, k int) (advised, fixed LiveSetting, err error) {
	var traces []*replay.Trace
	for seed := 1; seed <= days; seed++ {
		tr, err := familyTrace(family, uint64(seed), 0)
		if err != nil {
			return advised, fixed, err
		}
		traces = append(traces, tr)
	}
	day := traces[0].Duration
	var history bytes.Buffer
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).Truncate(day)
	if err := WriteAdviseHistory(&history, "live", start, day, traces); err != nil {
		return advised, fixed, err
	}
	histPath, jsonPath := filepath.Join(work, family+"-history.csv"), filepath.Join(work, family+"-advice.json")
	if err := os.WriteFile(histPath, history.Bytes(), 0o644); err != nil {
		return advised, fixed, err
	}
	cmd := exec.CommandContext(ctx, bin, "--history", histPath, "--day", day.String(),
		"--sandboxes-per-node", strconv.Itoa(k), "--node-launch-seconds", strconv.Itoa(int(liveDayLaunchDelay.Seconds())),
		"--consolidate-after", liveDayConsolidateAfter.String(), "--json", jsonPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return advised, fixed, fmt.Errorf("advise on the %s family's days 1..%d: %w\n%s", family, days, err, out)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return advised, fixed, err
	}
	return ReadAdvice(b)
}

// roundedSetting is the arrivals policy rounded to whole nodes of k, under the advised
// setting's bounds.
func roundedSetting(advised LiveSetting, k int) LiveSetting {
	m := advised.values()
	return LiveSetting{Name: "rounded", What: fmt.Sprintf("arrivals, rounded to %d per node", k), Config: []AdviceSetting{
		{"minReplicas", "1"}, {"maxReplicas", m["maxReplicas"]}, {"sizing.policy", "arrivals"},
		{"sizing.sandboxesPerNode", strconv.Itoa(k)},
	}}
}

// liveDayPolicy is setting s as the benchmark's policy in the namespace bursts-<day>-<name>: its
// program config with the code interpreter's requests on the template.
func liveDayPolicy(s LiveSetting, day string) (Policy, error) {
	cfg, err := s.ProgramConfig()
	if err != nil {
		return Policy{}, err
	}
	cfg["template"] = mustJSON(map[string]any{"resources": map[string]any{"requests": karpenterSandboxRequests}})
	p := Policy{Name: s.Name, Trace: day, Fixed: s.Fixed(), Config: cfg, How: s.What}
	if s.values()["sizing.policy"] == "arrivals" {
		p.ArrivalWindows = []int{30, 180}
	}
	return p, nil
}

// createLiveDayPolicy gives the policy a NodePool of its own (the control plane's, renamed, with
// a label its sandboxes select), renders and creates its objects, and starts its exporter, which
// KEDA reads through a tap that records each read (nil for a fixed pool).
func createLiveDayPolicy(b testing.TB, ctx context.Context, c *localcluster.Cluster, procs *process.Set, work, exporterBin string, p Policy) *DemandTap {
	ns := p.Namespace()
	np, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Get(ctx, localcluster.KarpenterNodePool, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	own := &unstructured.Unstructured{Object: map[string]any{"apiVersion": np.GetAPIVersion(), "kind": np.GetKind(),
		"metadata": map[string]any{"name": ns}, "spec": np.Object["spec"]}}
	if err := unstructured.SetNestedField(own.Object, ns, "spec", "template", "metadata", "labels", liveDaySettingLabel); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Create(ctx, own, metav1.CreateOptions{}); err != nil {
		b.Fatalf("%s: creating its NodePool: %v", ns, err)
	}
	addr, url := "", ""
	var tap *DemandTap
	if p.Autoscaled() {
		addr = freeAddr(b)
		if tap, err = StartDemandTap("http://" + addr + contract.DemandPath); err != nil {
			b.Fatalf("%s: the tap in front of its exporter: %v", ns, err)
		}
		b.Cleanup(func() { _ = tap.Close() })
		url = tap.URL
	}
	shared := map[string]string{
		"clusterMode": "existing", "kubeconfig": c.Kubeconfig, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt", "loadCap": "1",
	}
	objs, err := Render(p, shared, url)
	if err != nil {
		b.Fatal(err)
	}
	st := objs.Find("sandboxtemplates")
	if st == nil {
		b.Fatalf("%s: the program rendered no SandboxTemplate", ns)
	}
	if err := unstructured.SetNestedField(st.Object, ns, "spec", "podTemplate", "spec", "nodeSelector", liveDaySettingLabel); err != nil {
		b.Fatal(err)
	}
	if err := createObjects(ctx, c, objs); err != nil {
		b.Fatalf("%s: %v", ns, err)
	}
	if so := objs.Find("scaledobjects"); so != nil {
		b.Logf("%s: ScaledObject spec %s", ns, mustJSON(so.Object["spec"]))
	}
	if p.Autoscaled() {
		pools, err := ExporterPools(p, objs)
		if err != nil {
			b.Fatal(err)
		}
		startExporter(b, ctx, c, procs, work, exporterBin, p, pools, addr)
	}
	return tap
}

// runNodePoolLedgers reads every NodeClaim and Node each interval and gives each ledger those of
// its NodePool (named after the policy's namespace), until the returned stop is called.
func runNodePoolLedgers(ctx context.Context, c *localcluster.Cluster, ledgers map[string]*claimLedger, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	read := func() {
		claims, err := c.Dynamic.Resource(localcluster.NodeClaimGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return // a read that failed says nothing: no NodeClaim is taken as gone by it
		}
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		now := time.Now()
		byPool := map[string][]unstructured.Unstructured{}
		for _, u := range claims.Items {
			pool := u.GetLabels()["karpenter.sh/nodepool"]
			byPool[pool] = append(byPool[pool], u)
		}
		nodesByPool := map[string][]corev1.Node{}
		for _, n := range nodes.Items {
			pool := n.Labels["karpenter.sh/nodepool"]
			nodesByPool[pool] = append(nodesByPool[pool], n)
		}
		for pool, l := range ledgers {
			l.observe(now, byPool[pool], nodesByPool[pool])
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			read()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// nodeSecondsWithin is the node-seconds of the records inside [from, to): each NodeClaim from
// its creation to gone (to, while it is there).
func nodeSecondsWithin(recs []claimRecord, from, to time.Time) float64 {
	total := 0.0
	for _, r := range recs {
		end := to
		if !r.Gone.IsZero() && r.Gone.Before(to) {
			end = r.Gone
		}
		begin := r.Created
		if begin.Before(from) {
			begin = from
		}
		if end.After(begin) {
			total += end.Sub(begin).Seconds()
		}
	}
	return total
}

// nodeSteps is the number of NodeClaims there over [from, to), relative to from.
func nodeSteps(recs []claimRecord, from, to time.Time) []Step {
	type ev struct {
		at time.Duration
		d  int
	}
	var evs []ev
	n := 0
	for _, r := range recs {
		if r.Created.After(to) || (!r.Gone.IsZero() && !r.Gone.After(from)) {
			continue
		}
		if !r.Created.After(from) {
			n++
		} else {
			evs = append(evs, ev{r.Created.Sub(from), +1})
		}
		if !r.Gone.IsZero() && r.Gone.Before(to) {
			evs = append(evs, ev{r.Gone.Sub(from), -1})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	steps := []Step{{At: 0, Value: float64(n)}}
	for _, e := range evs {
		n += e.d
		steps = append(steps, Step{At: e.at, Value: float64(n)})
	}
	return steps
}
