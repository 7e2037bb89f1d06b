package verifier

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// twoPools is the two-pool stack of the end-to-end run: two pools, each in its own namespace,
// the exporter in the stack's; code sized by claims, browser by arrivals.
func twoPools(t *testing.T) *cluster {
	c := newCluster(t)
	c.stackNS = "agents"
	c.addPool(&simPool{name: "code", ns: "agents-code", min: 1, max: 3})
	c.addPool(&simPool{name: "browser", ns: "agents-browser", min: 1, max: 10, formula: arrivalsFormula})
	return c
}

// poolsConfig is the config parseConfig makes of the pools output for the simulated stack.
func poolsConfig(c *cluster) Config {
	cfg := testConfig()
	cfg.StackNamespace = c.exporterNS()
	cfg.Targets, cfg.AllTargets = c.targets(), c.targets()
	for i := range cfg.Targets {
		if c.pools[i].formula != "" {
			cfg.Targets[i].SizingPolicy, cfg.AllTargets[i].SizingPolicy = "arrivals", "arrivals"
		} else {
			cfg.Targets[i].SizingPolicy, cfg.AllTargets[i].SizingPolicy = "claims", "claims"
		}
	}
	cfg.applyTarget(cfg.Targets[0])
	if len(c.pools) > 1 {
		// the cross-pool rounds: the driven pool must rise, and a fault move another, inside the window
		cfg.ControlFloor = faultWindow
	}
	cfg.HPASync = 20 * time.Millisecond
	return cfg
}

// Every phase for each pool, then the cross-pool control: all pass, each check names its
// pool, each pool's steps are recorded (the arrivals pool's held to the formula on the
// readings), and both rounds show the other pool at its floor at every reading.
func TestTwoPoolsAllPhases(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := twoPools(t)
	c.kwok = true
	c.start()
	cfg := poolsConfig(c)
	cfg.JSONPath = filepath.Join(t.TempDir(), "report.json")
	code, rep, out := runPools(t, context.Background(), c, cfg, blueprintExec())
	t.Log("\n" + out)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, rep.Failures())
	}
	for _, ch := range rep.Checks {
		if ch.Phase == "cross-pool" || ch.Phase == "run" {
			continue
		}
		if !strings.HasPrefix(ch.Name, "["+ch.Pool+"] ") || ch.Pool == "" {
			t.Errorf("check %q (pool %q) does not carry its pool", ch.Name, ch.Pool)
		}
	}
	for _, want := range []string{"namespace agents is labelled", "namespace agents-code is labelled", "namespace agents-browser is labelled",
		"subject: system:serviceaccount:agents:claim-exporter; the pool's namespace: agents-browser"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if exact(t, rep, "[code] the exporter may not list sandboxclaims.extensions.agents.x-k8s.io in agents") != report.Pass {
		t.Error("the exporter's own namespace holds no pool: listing claims there must be denied and checked")
	}
	// The JSON an e2e decodes: every pool's record, the cross-pool rounds.
	b, err := os.ReadFile(cfg.JSONPath)
	if err != nil {
		t.Fatal(err)
	}
	var got report.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pools) != 2 || got.Pools[0].Name != "code" || got.Pools[1].Name != "browser" {
		t.Fatalf("pools in the report: %+v", got.Pools)
	}
	if got.Pools[0].Sizing != "claims" || got.Pools[1].Sizing != "arrivals" || got.Pools[1].Control == nil || len(got.Pools[1].ScaleUp) != 4 {
		t.Errorf("pool records: code %+v browser %+v", got.Pools[0], got.Pools[1])
	}
	if len(got.ScaleUp) != 4 || got.Control == nil || *got.ScaleUp[3].SpecReplicas != 3 {
		t.Errorf("the top-level steps must stay the first pool's: %+v", got.ScaleUp)
	}
	for _, s := range got.Pools[1].ScaleUp[1:] {
		if len(s.FormulaReadings) == 0 || s.SpecReplicas == nil || *s.SpecReplicas != s.Expected {
			t.Errorf("arrivals step without the readings it was held to: %+v", s)
		}
	}
	if got.CrossPool == nil || got.CrossPool.Skipped != "" || len(got.CrossPool.Rounds) != 2 {
		t.Fatalf("cross-pool: %+v", got.CrossPool)
	}
	// Claims-sized pools are driven first: they settle at once.
	if got.CrossPool.Rounds[0].Driven != "code" || got.CrossPool.Rounds[1].Driven != "browser" {
		t.Errorf("rounds driven %s, %s; want code then browser", got.CrossPool.Rounds[0].Driven, got.CrossPool.Rounds[1].Driven)
	}
	for _, r := range got.CrossPool.Rounds {
		for _, p := range r.Pools {
			if p.Readings < 2 || len(p.Series) != p.Readings {
				t.Errorf("round %s: %s read %d times, series %d", r.Driven, p.Name, p.Readings, len(p.Series))
			}
			still := len(p.Values) == 1 && p.Values[0] == p.Floor
			if (p.Name == r.Driven) == still {
				t.Errorf("round %s: %s values %v, floor %d", r.Driven, p.Name, p.Values, p.Floor)
			}
		}
	}
	for _, name := range []string{"[cross-pool] demand on code leaves browser at its floor", "[cross-pool] demand on browser leaves code at its floor",
		"[cross-pool] demand on code moves code's spec.replicas", "[cross-pool] the exporter counts the claims on browser for browser alone"} {
		if status(t, rep, name) != report.Pass {
			t.Errorf("%s: not PASS", name)
		}
	}
	for _, ns := range []string{"agents-code", "agents-browser"} {
		if n := c.claimNames(ns); len(n) != 0 {
			t.Errorf("claims left in %s: %v", ns, n)
		}
	}
}

// Reject: a pool whose autoscaler also counts the other pool's claims (a ScaledObject on the
// wrong URL, an exporter that counts both) moves under the other pool's demand, and the
// cross-pool control FAILs it, naming both pools, with its readings. Broken once: without
// the fault (follows "") the same run passes.
func TestCrossPoolRejectsAPoolThatFollowsAnother(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	for _, broken := range []bool{true, false} {
		t.Run(map[bool]string{true: "b follows a", false: "b on its own"}[broken], func(t *testing.T) {
			c := newCluster(t)
			c.stackNS = "agents"
			c.addPool(&simPool{name: "a", ns: "agents-a", min: 1, max: 3})
			b := c.addPool(&simPool{name: "b", ns: "agents-b", min: 1, max: 3})
			if broken {
				b.follows = "a"
			}
			c.start()
			cfg := poolsConfig(c)
			cfg.Phase = "control"
			code, rep, out := runPools(t, context.Background(), c, cfg, blueprintExec())
			const check = "[cross-pool] demand on a leaves b at its floor"
			if !broken {
				if code != 0 || status(t, rep, check) != report.Pass {
					t.Fatalf("exit %d: %v\n%s", code, rep.Failures(), out)
				}
				return
			}
			if code != 1 || status(t, rep, check) != report.Fail {
				t.Fatalf("exit %d, %q %s\n%s", code, check, status(t, rep, check), out)
			}
			ev := rep.Find(check)[0].Evidence
			if !strings.Contains(ev, "b moved under a's demand") || !strings.Contains(ev, "readings:") {
				t.Errorf("the FAIL must show b's readings: %s", ev)
			}
			// The other direction is still clean: a does not follow b.
			if status(t, rep, "[cross-pool] demand on b leaves a at its floor") != report.Pass {
				t.Errorf("a moved under b's demand\n%s", out)
			}
		})
	}
}

// Reject: a driven pool that never moves makes the other pools' flat line prove nothing.
func TestCrossPoolRejectsADrivenPoolThatDoesNotMove(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.stackNS = "agents"
	c.addPool(&simPool{name: "a", ns: "agents-a", min: 1, max: 3})
	c.addPool(&simPool{name: "b", ns: "agents-b", min: 1, max: 3})
	c.keda.Store(false) // the HPA never follows demand
	c.start()
	cfg := poolsConfig(c)
	cfg.Phase = "control"
	code, rep, out := runPools(t, context.Background(), c, cfg, blueprintExec())
	if code != 1 || status(t, rep, "[cross-pool] demand on a moves a's spec.replicas") != report.Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// One pool: the cross-pool control is SKIP with the reason, never PASS.
func TestCrossPoolSkipsWithOnePool(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.start()
	cfg := controlConfig()
	cfg.ControlFloor = acceptWindow
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	if code != 0 || status(t, rep, crossSkipName) != report.Skip || !strings.Contains(out, "the stack has one pool (warm-pool)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if rep.CrossPool == nil || rep.CrossPool.Skipped == "" || len(rep.CrossPool.Rounds) != 0 {
		t.Fatalf("crossPool in the report: %+v", rep.CrossPool)
	}
	// --pool naming one of two still runs it: the other pool is read, never written.
	c2 := twoPools(t)
	c2.start()
	cfg2 := poolsConfig(c2)
	cfg2.Phase = "control"
	cfg2.Targets = cfg2.Targets[:1]
	code, rep, out = runPools(t, context.Background(), c2, cfg2, blueprintExec())
	if code != 0 || status(t, rep, "[cross-pool] demand on code leaves browser at its floor") != report.Pass || len(rep.CrossPool.Rounds) != 1 {
		t.Fatalf("exit %d: %v\n%s", code, rep.Failures(), out)
	}
	if len(rep.Pools) != 1 || len(rep.Find("[browser]")) != 0 {
		t.Errorf("a pool the run only watches got checks or a record: %+v", rep.Pools)
	}
	if so, ok := c2.soOf(context.Background(), c2.pools[1]); !ok || so.GetUID() != "so-uid-0" {
		t.Error("the watched pool's ScaledObject was touched")
	}
}

// A single arrivals pool: every step is held to the formula on the exporter's readings.
func TestArrivalsDemandAccepts(t *testing.T) {
	c := newCluster(t)
	c.addPool(&simPool{name: "warm-pool", ns: testNS, so: "warm-pool", min: 1, max: 10, formula: arrivalsFormula, exporterPath: "demand"})
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	cfg.SizingPolicy = "arrivals"
	cfg.HPASync = 20 * time.Millisecond
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	t.Log("\n" + out)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, rep.Failures())
	}
	if len(rep.ScaleUp) != 4 || len(rep.ScaleDown) != 3 || rep.Pools[0].Sizing != "arrivals" {
		t.Fatalf("steps up %d down %d sizing %q", len(rep.ScaleUp), len(rep.ScaleDown), rep.Pools[0].Sizing)
	}
	// One arrival in the short window: the formula's 5 (the program's defaults).
	if s := rep.ScaleUp[1]; s.Expected != 5 || *s.SpecReplicas != 5 {
		t.Errorf("1 claim: %+v", s)
	}
	for _, want := range []string{"arrivals_long=1 arrivals_short=1 active_claims=1", "-> formula 5 -> clamp(ceil(5/1), 1, 10)=5",
		"within pollingInterval 1s + HPA sync 20ms of the decision", "0 claims, arrivals_long=0 arrivals_short=0: the formula gives 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// Reject: spec.replicas one off the formula under demand FAILs each step that should have
// moved, with the readings; broken once (offBy 0 passes, TestArrivalsDemandAccepts).
func TestArrivalsRejectsOneOff(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	p := c.addPool(&simPool{name: "warm-pool", ns: testNS, so: "warm-pool", min: 1, max: 10, formula: arrivalsFormula, exporterPath: "demand"})
	p.offBy = 1
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	cfg.StepTimeout = time.Second
	cfg.HPASync = 20 * time.Millisecond
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	const check = "scale up: 1 claim(s) -> spec.replicas held to the formula"
	if code != 1 || status(t, rep, check) != report.Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	ev := rep.Find(check)[0].Evidence
	pairs := regexp.MustCompile(`-> (\d+) vs spec\.replicas=(\d+)`).FindAllStringSubmatch(ev, -1)
	if len(pairs) == 0 || !strings.Contains(ev, "timed out") {
		t.Fatalf("the FAIL must show the readings it was held to: %s", ev)
	}
	// The simulated HPA writes formula+1 every sync; a reading taken just after an arrival
	// left its window may still see the previous write (a busy machine delays the sync), so
	// each counted reading must be off the formula and at least one must show the offset.
	offByOne := 0
	for _, p := range pairs {
		want, _ := strconv.Atoi(p[1])
		got, _ := strconv.Atoi(p[2])
		if got == want {
			t.Errorf("reading %q: a reading on the formula was counted as off it (only readings under demand, off the formula, are counted)", p[0])
		}
		if got == want+1 {
			offByOne++
		}
	}
	if offByOne == 0 {
		t.Errorf("no counted reading shows spec.replicas one above the formula, as the simulated HPA writes it: %s", ev)
	}
}

// The precondition recognises the program's arrivals formula and refuses, with the reason,
// every formula or trigger it could not hold a step to.
func TestPreconditionArrivalsFormula(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(spec map[string]any)
		sizing   string // the stack's sizingPolicy output
		wantFail string // evidence the FAIL must carry; "" = recognised
	}{
		{name: "the program's formula"},
		{name: "with headroom 1", mutate: func(spec map[string]any) {
			setFormula(spec, strings.Replace(arrivalsFormula, ": 0) + 0)", ": 0) + 1)", 1))
		}},
		{name: "the stack says claims", sizing: "claims", wantFail: `sizingPolicy output for this pool is "claims"`},
		{name: "not wrapped in float(", mutate: func(spec map[string]any) {
			setFormula(spec, strings.TrimSuffix(strings.TrimPrefix(arrivalsFormula, "float("), ")"))
		}, wantFail: "does not start with float("},
		{name: "no arrivals_long trigger", mutate: func(spec map[string]any) {
			spec["triggers"] = spec["triggers"].([]any)[:1]
		}, wantFail: "neither <trigger> + <constant> nor the arrivals formula"},
		{name: "arrivals_short reads active_claims", mutate: func(spec map[string]any) {
			trigger(spec, 0)["metadata"].(map[string]any)["valueLocation"] = "active_claims"
		}, wantFail: `reads valueLocation "active_claims"`},
		{name: "a trigger on another pool's URL", mutate: func(spec map[string]any) {
			trigger(spec, 1)["metadata"].(map[string]any)["url"] = "http://claim-exporter.x.svc.cluster.local:8080/demand/other"
		}, wantFail: "not the pool's exporter path /demand"},
		{name: "a syntax error", mutate: func(spec map[string]any) { setFormula(spec, "float(arrivals_short +)") }, wantFail: "does not compile"},
		{name: "a variable no trigger names", mutate: func(spec map[string]any) {
			setFormula(spec, "float(arrivals_short + arrivals_long + claims)")
		}, wantFail: "does not compile"},
		{name: "a prometheus trigger beside them", mutate: func(spec map[string]any) {
			spec["triggers"] = append(spec["triggers"].([]any), map[string]any{"type": "prometheus", "name": "queue", "metadata": map[string]any{}})
		}, wantFail: "trigger queue is of type prometheus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.addPool(&simPool{name: "warm-pool", ns: testNS, so: "warm-pool", min: 1, max: 10, formula: arrivalsFormula, exporterPath: "demand"})
			c.start()
			ctx := context.Background()
			if tc.mutate != nil {
				so, _ := c.soExists(ctx)
				tc.mutate(so.Object["spec"].(map[string]any))
				if _, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Update(ctx, so, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cfg := testConfig()
			cfg.SizingPolicy = "arrivals"
			if tc.sizing != "" {
				cfg.SizingPolicy = tc.sizing
			}
			var buf syncBuffer
			rep := newReport(&buf)
			r := newRunner(cfg, c.kube, c.dyn, nil, fakeDemand{c: c}, rep)
			err := r.precondition(ctx)
			const check = "the HPA's metric maps claims to warm sandboxes"
			if tc.wantFail == "" {
				if err != nil || r.formula == nil || !r.mapped {
					t.Fatalf("%v %v\n%s", err, rep.Failures(), buf.String())
				}
				return
			}
			if err == nil || status(t, rep, check) != report.Fail || !strings.Contains(rep.Find(check)[0].Evidence, tc.wantFail) {
				t.Fatalf("want FAIL with %q\n%s", tc.wantFail, buf.String())
			}
		})
	}
}

func setFormula(spec map[string]any, f string) {
	spec["advanced"].(map[string]any)["scalingModifiers"].(map[string]any)["formula"] = f
}

func trigger(spec map[string]any, i int) map[string]any {
	return spec["triggers"].([]any)[i].(map[string]any)
}

// The formula evaluated as KEDA does gives the program's spares: 1, 2, 3 arrivals in the short
// window -> 5, 8, 10; none -> 0; the HPA's decision clamps it.
func TestFormulaEvaluation(t *testing.T) {
	m, err := recognizeArrivals(arrivalsSO(arrivalsFormula, "demand/code"), arrivalsFormula, "demand/code")
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{min: 1, max: 8, target: 1, formula: m}
	for n, want := range map[float64][2]float64{0: {0, 1}, 1: {5, 5}, 2: {8, 8}, 3: {10, 8}} {
		d, v, err := r.formulaDecision(m.uniform(n))
		if err != nil || v != want[0] || float64(d) != want[1] {
			t.Errorf("%g arrivals: value %g decision %d (%v), want %v", n, v, d, err, want)
		}
	}
	// Only the long window: 3 arrivals x 0.2 = 0.6 expected -> 4.
	if d, v, _ := r.formulaDecision(map[string]float64{"arrivals_short": 0, "arrivals_long": 3}); v != 4 || d != 4 {
		t.Errorf("long window only: %g -> %d", v, d)
	}
	if _, err := m.inputs(DemandReading{Via: "x", Fields: map[string]float64{"active_claims": 1}}); err == nil || !strings.Contains(err.Error(), "has no arrivals_long") {
		t.Errorf("an answer without the arrival fields must be an error, never 0: %v", err)
	}
}

// Rounded to whole nodes of 4 and floored by a schedule, as the program renders it: the claims
// trigger reads active_claims, a window in force now gives its warm count and one that is not
// gives 0, and the decision fills whole nodes around the claims held.
func TestFormulaWithNodeRoundingAndASchedule(t *testing.T) {
	spares := strings.TrimSuffix(strings.TrimPrefix(arrivalsFormula, "float("), ")")
	formula := "float(4 * ceil((claims + max(" + spares + ", schedule_0, schedule_1)) / 4) - claims)"
	so := arrivalsSO(formula, "demand/code")
	now := time.Now().UTC()
	// A window from an hour ago to two hours from now, and one that ended an hour ago.
	hm := func(d time.Duration) string { t := now.Add(d); return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour()) }
	cron := func(name, start, end, warm string) any {
		return map[string]any{"type": "cron", "name": name, "metadata": map[string]any{"start": start, "end": end, "timezone": "UTC", "desiredReplicas": warm}}
	}
	claims := map[string]any{"type": "metrics-api", "name": "claims",
		"metadata": map[string]any{"url": "http://claim-exporter.agents.svc.cluster.local:8080/demand/code", "valueLocation": "active_claims", "format": "json"}}
	spec := so.Object["spec"].(map[string]any)
	spec["triggers"] = append(spec["triggers"].([]any), claims, cron("schedule_0", hm(-time.Hour), hm(2*time.Hour), "3"), cron("schedule_1", hm(-3*time.Hour), hm(-time.Hour), "9"))
	m, err := recognizeArrivals(so, formula, "demand/code")
	if err != nil {
		t.Fatal(err)
	}
	if w := m.windows(); !strings.Contains(w, "schedule_0 = 3 warm") || !strings.Contains(w, "in force now (3)") || !strings.Contains(w, "schedule_1 = 9 warm") || !strings.Contains(w, "not in force now (0)") {
		t.Errorf("the evidence must say which window is in force: %s", w)
	}
	r := &Runner{min: 0, max: 40, target: 1, formula: m}
	// No demand: the window's 3 spares, rounded to one node of 4.
	if d, v, err := r.formulaDecision(m.uniform(0)); err != nil || v != 4 || d != 4 {
		t.Errorf("at rest: %g -> %d (%v), want 4: the floor of 3 rounded to a node", v, d, err)
	}
	// 2 claims held, 1 arrival each window: spares 5 -> 7 slots -> two nodes, 8 - 2 = 6 warm.
	in, err := m.inputs(DemandReading{Via: "x", ActiveClaims: 2, Fields: map[string]float64{"active_claims": 2, "arrivals_short": 1, "arrivals_long": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if in["schedule_0"] != 3 || in["schedule_1"] != 0 || in["claims"] != 2 {
		t.Errorf("inputs %s: want schedule_0=3 schedule_1=0 claims=2", formatInputs(in))
	}
	if d, v, err := r.formulaDecision(in); err != nil || v != 6 || d != 6 {
		t.Errorf("2 held, 1 arrival: %g -> %d (%v), want 6", v, d, err)
	}
	// A cron trigger KEDA would refuse is refused, naming it.
	trigger(spec, 4)["metadata"].(map[string]any)["start"] = "@daily"
	if _, err := recognizeArrivals(so, formula, "demand/code"); err == nil || !strings.Contains(err.Error(), `trigger schedule_1 (cron): start "@daily" is not a five-field cron expression`) {
		t.Errorf("want the cron refusal, got %v", err)
	}
	trigger(spec, 4)["metadata"].(map[string]any)["start"] = hm(-3 * time.Hour)
	trigger(spec, 4)["metadata"].(map[string]any)["desiredReplicas"] = "0"
	if _, err := recognizeArrivals(so, formula, "demand/code"); err == nil || !strings.Contains(err.Error(), `desiredReplicas "0"`) {
		t.Errorf("want the desiredReplicas refusal, got %v", err)
	}
}

// arrivalsSO builds an arrivals ScaledObject for recognizeArrivals.
func arrivalsSO(formula, path string) *unstructured.Unstructured {
	trig := func(name string) any {
		return map[string]any{"type": "metrics-api", "name": name,
			"metadata": map[string]any{"url": "http://claim-exporter.agents.svc.cluster.local:8080/" + path, "valueLocation": name, "format": "json"}}
	}
	return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"triggers": []any{trig("arrivals_short"), trig("arrivals_long")},
		"advanced": map[string]any{"scalingModifiers": map[string]any{"formula": formula, "target": "1"}},
	}}}
}

// The pools output: every pool, --pool for one, the single keys for outputs that predate it.
func TestParseConfigPools(t *testing.T) {
	const outputs = `{
  "namespace": "agents-code", "stackNamespace": "agents", "stackLabel": "s.dev", "poolName": "code", "scaledObjectName": "code",
  "exporterService": "claim-exporter", "exporterServiceAccount": "claim-exporter",
  "exporterUrl": "http://claim-exporter.agents.svc.cluster.local:8080/demand/code", "minReplicas": 1, "maxReplicas": 3, "loadCap": 3,
  "pools": [
    {"name": "code", "namespace": "agents-code", "templateName": "code-agent", "scaledObjectName": "code",
     "exporterUrl": "http://claim-exporter.agents.svc.cluster.local:8080/demand/code", "claimSelector": "",
     "minReplicas": 1, "maxReplicas": 3, "loadCap": 3, "sizingPolicy": "claims"},
    {"name": "browser", "namespace": "agents-browser", "templateName": "browser-agent", "scaledObjectName": "browser",
     "exporterUrl": "http://claim-exporter.agents.svc.cluster.local:8080/demand/browser", "claimSelector": "tier=b",
     "minReplicas": "0", "maxReplicas": 5, "loadCap": 2, "sizingPolicy": "arrivals"}
  ]
}`
	f := filepath.Join(t.TempDir(), "outputs.json")
	if err := os.WriteFile(f, []byte(outputs), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (Config, error) {
		return parseConfig(append([]string{"--outputs-file", f}, args...), io.Discard, func(string, ...any) {}, nil)
	}
	c, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	ts := c.targets()
	if len(ts) != 2 || len(c.allTargets()) != 2 || c.stackNamespace() != "agents" {
		t.Fatalf("targets %+v stack namespace %q", ts, c.stackNamespace())
	}
	b := ts[1]
	if b.Name != "browser" || b.Namespace != "agents-browser" || b.ScaledObject != "browser" || b.ExporterPath != "demand/browser" ||
		b.ClaimSelector != "tier=b" || b.LoadCap != 2 || b.OutputsMin != 0 || b.OutputsMax != 5 || b.SizingPolicy != "arrivals" {
		t.Errorf("browser: %+v", b)
	}
	if pc := c.forPool(b); pc.Namespace != "agents-browser" || pc.Pool != "browser" || pc.stackNamespace() != "agents" || pc.LoadCap != 2 {
		t.Errorf("browser's config: %+v", pc)
	}
	if got := guardedNamespaces(c); strings.Join(got, ",") != "agents-code,agents-browser,agents" {
		t.Errorf("guarded namespaces %v: every pool's and the stack's", got)
	}
	// --pool runs one; the others stay in AllTargets for the cross-pool control.
	c, err = parse("--pool", "browser", "--load-cap", "1")
	if err != nil || len(c.targets()) != 1 || c.targets()[0].Name != "browser" || c.targets()[0].LoadCap != 1 || len(c.allTargets()) != 2 || c.Namespace != "agents-browser" {
		t.Fatalf("--pool browser: %v %+v", err, c.targets())
	}
	// A one-pool flag names that pool's object.
	if c, err = parse("--pool", "code", "--scaled-object", "mine"); err != nil || c.targets()[0].ScaledObject != "mine" {
		t.Fatalf("--scaled-object with --pool: %v %+v", err, c.targets())
	}
	for _, args := range [][]string{
		{"--pool", "nope"},                     // not a pool of the stack
		{"--namespace", "x"},                   // one pool's, with two driven
		{"--scaled-object", "x"},               // same
		{"--claim-selector", "a=b"},            // same
		{"--exporter-url", "http://h:1/other"}, // a path with two pools
		{"--pool", "code", "--hpa-sync-period", "0s"},
	} {
		if _, err := parse(args...); err == nil {
			t.Errorf("%v accepted", args)
		} else if args[0] == "--pool" && args[1] == "nope" && !strings.Contains(err.Error(), "code, browser") {
			t.Errorf("the refusal must list the pools: %v", err)
		}
	}
	// The exporter's address serves each pool at its own path.
	if c, err = parse("--exporter-url", "http://127.0.0.1:9/demand"); err != nil {
		t.Fatal(err)
	}
	if u := directDemandURL(c.ExporterURL, c.targets()[1]); u != "http://127.0.0.1:9/demand/browser" {
		t.Errorf("direct URL %s", u)
	}
	if u := directDemandURL("http://127.0.0.1:9", PoolTarget{ExporterPath: "demand"}); u != "http://127.0.0.1:9/demand" {
		t.Errorf("one pool, no path: %s", u)
	}
	if u := directDemandURL("http://127.0.0.1:9/custom", PoolTarget{ExporterPath: "demand"}); u != "http://127.0.0.1:9/custom" {
		t.Errorf("one pool, its own path: %s", u)
	}
	// Outputs written before the pools output: one pool from the single keys, the stack
	// namespace the pool's, --pool renaming it as before.
	old := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(old, []byte(outputsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{"--outputs-file", old, "--pool", "p2"}, io.Discard, func(string, ...any) {}, nil)
	if err != nil || len(c.targets()) != 1 || c.targets()[0].Name != "p2" || c.stackNamespace() != "wp-ns" || c.targets()[0].ExporterPath != "demand" {
		t.Fatalf("old outputs: %v %+v %q", err, c.targets(), c.stackNamespace())
	}
}

// Every pool's namespace and the stack's must be this stack's: one that is not is refused
// (exit 2) before anything is touched in any of them.
func TestGuardEveryNamespace(t *testing.T) {
	for _, ns := range []string{"agents-browser", "agents"} {
		t.Run(ns, func(t *testing.T) {
			c := twoPools(t)
			c.unlabelledNS = ns
			c.start()
			ex := blueprintExec()
			code, rep, out := runPools(t, context.Background(), c, poolsConfig(c), ex)
			if code != 2 || !strings.Contains(out, "refusing to run: namespace "+ns+" is not labelled") {
				t.Fatalf("exit %d\n%s", code, out)
			}
			if len(rep.Checks) != 0 || len(c.claimNames("agents-code")) != 0 || ex.calls.Load() != 0 {
				t.Fatal("a refused run did something")
			}
		})
	}
}

// The exporter's ServiceAccount lives in the stack's namespace and reads claims in each
// pool's: the reviews ask as that subject, and a grant in its own namespace FAILs.
func TestAccessAcrossNamespaces(t *testing.T) {
	for _, broken := range []bool{false, true} {
		c := twoPools(t)
		if broken {
			c.allowExtra = map[string]bool{"list sandboxclaims agents": true}
		}
		c.start()
		cfg := poolsConfig(c)
		var buf syncBuffer
		rep := newReport(&buf)
		r := newPoolRunner(cfg.forPool(cfg.Targets[1]), c.kube, c.dyn, nil, nil, rep.ForPool("browser", "agents-browser", true, false))
		if err := r.access(context.Background()); err != nil {
			t.Fatal(err)
		}
		const check = "[browser] the exporter may not list sandboxclaims.extensions.agents.x-k8s.io in agents"
		if got := exact(t, rep, check); (got == report.Fail) != broken {
			t.Errorf("broken=%t: %s\n%s", broken, got, buf.String())
		}
		if !broken && (!rep.OK() || status(t, rep, "[browser] the exporter may list sandboxclaims.extensions.agents.x-k8s.io in agents-browser") != report.Pass) {
			t.Errorf("the program's RBAC must pass: %v", rep.Failures())
		}
	}
}

// parseDemand keeps every number of the answer: the triggers' valueLocations.
func TestParseDemandArrivals(t *testing.T) {
	d, err := parseDemand(200, []byte(`{"active_claims": 2, "pool": "browser", "arrivals_short": 3, "arrivals_long": 7, "arrivals_short_window_seconds": 30, "arrivals_long_window_seconds": 180, "fresh": true, "method": "list"}`))
	if err != nil || d.Pool != "browser" || d.Fields["arrivals_short"] != 3 || d.Fields["arrivals_long"] != 7 || d.longWindow() != 180*time.Second {
		t.Fatalf("%+v %v", d, err)
	}
	if !strings.Contains(d.String(), "arrivals_short=3 arrivals_long=7") {
		t.Errorf("the reading must print the arrivals: %s", d)
	}
}

// exact is the status of the check named exactly name.
func exact(t *testing.T, rep *report.Report, name string) report.Status {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	t.Fatalf("no check named %q", name)
	return ""
}

// A pool whose phases stopped early (here its claim never reported Ready) still holds this
// run's claim when the cross-pool control starts: it is deleted by name first, so the
// control starts from no demand instead of failing on verify's own leftover.
func TestCrossPoolClearsLeftoverClaims(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.stackNS = "agents"
	c.addPool(&simPool{name: "a", ns: "agents-a", min: 1, max: 3})
	c.addPool(&simPool{name: "b", ns: "agents-b", min: 1, max: 3})
	c.readyDelay = time.Second
	c.kwok = true
	c.start()
	cfg := poolsConfig(c)
	cfg.AdoptionTimeout = 200 * time.Millisecond
	code, rep, out := runPools(t, context.Background(), c, cfg, blueprintExec())
	if code != 1 || status(t, rep, "[a] the claim reported Ready within the bound") != report.Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "a's phases left this run's claims [demand-1]: deleted [demand-1]") ||
		status(t, rep, "[cross-pool] every pool holds its floor before demand on a") != report.Pass {
		t.Fatalf("the leftover was not cleared first\n%s", out)
	}
}
