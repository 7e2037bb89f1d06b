package bursts

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

func TestFrontierPlotWritesAPicture(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"frontier.png", "frontier.svg"} {
		path := filepath.Join(dir, name)
		points := append(handMadePoints(), Point{Name: "arrivals", Warm: 99.8, Idle: 2200})
		if err := FrontierPlot(path, "day trace, seed 1", points); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if strings.HasSuffix(name, ".png") {
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil || cfg.Width < 600 || cfg.Height < 300 {
				t.Fatalf("%s is not a PNG of a readable size: %+v %v", name, cfg, err)
			}
		} else if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("arrivals")) {
			t.Fatalf("%s is not an SVG naming its points", name)
		}
	}
}

func TestPlotsRefuseWhatTheyCannotDraw(t *testing.T) {
	dir := t.TempDir()
	if err := FrontierPlot(filepath.Join(dir, "f.png"), "t", nil); err == nil {
		t.Error("a frontier plot of no points written")
	}
	if err := FrontierPlot(filepath.Join(dir, "f.jpg"), "t", handMadePoints()); err == nil || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("a .jpg plot: %v", err)
	}
	if err := FrontierPlot(filepath.Join(dir, "missing", "f.png"), "t", handMadePoints()); err == nil {
		t.Error("a plot into a missing directory reported written")
	}
	if err := TimelinePlot(filepath.Join(dir, "t.png"), "t", Timeline{Policy: "p"}); err == nil {
		t.Error("a timeline of no series written")
	}
	if _, err := os.Stat(filepath.Join(dir, "f.png")); !os.IsNotExist(err) {
		t.Errorf("a refused plot left a file: %v", err)
	}
}

func TestDemandStepsFollowTheTrace(t *testing.T) {
	s := time.Second
	tr := &replay.Trace{Arrivals: []replay.Arrival{{At: 0, Lifetime: 10 * s}, {At: 5 * s, Lifetime: 10 * s}, {At: 10 * s, Lifetime: 2 * s}}}
	// t=0: 1; t=5: 2; t=10: one ends, one starts: 2; t=12: 1; t=15: 0.
	want := []Step{{0, 1}, {5 * s, 2}, {10 * s, 2}, {12 * s, 1}, {15 * s, 0}}
	if got := DemandSteps(tr); !reflect.DeepEqual(got, want) {
		t.Fatalf("DemandSteps = %v, want %v", got, want)
	}
	for _, st := range DemandSteps(tr) {
		if int(st.Value) != tr.ActiveAt(st.At) {
			t.Errorf("at %s the step says %v, ActiveAt %d", st.At, st.Value, tr.ActiveAt(st.At))
		}
	}
}

func TestTimelinePlotWritesAPicture(t *testing.T) {
	s := time.Second
	tr := &replay.Trace{Arrivals: []replay.Arrival{{At: 0, Lifetime: 60 * s}, {At: 30 * s, Lifetime: 90 * s}}}
	tl := Timeline{Policy: "arrivals", Demand: DemandSteps(tr),
		Spec:  []Step{{0, 2}, {15 * s, 3}, {120 * s, 1}},
		Ready: []Step{{0, 2}, {1 * s, 1}, {7 * s, 2}, {31 * s, 1}, {37 * s, 3}}}
	path := filepath.Join(t.TempDir(), "timeline.png")
	if err := TimelinePlot(path, "day trace: arrivals", tl); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 1000 {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(b)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
}

// The plotting library is the benchmark's alone: neither the program nor the
// exporter (nor anything a stack deploys) may pull it in.
func TestPlottingStaysOutOfTheProductsImportGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go list of the product's packages skipped")
	}
	const mod = "warmpool.local/warm-pool-autoscaling-keda"
	pkgs := []string{mod, mod + "/program", mod + "/components", mod + "/exporter", mod + "/exporter/cmd/claim-exporter", mod + "/contract", mod + "/verify"}
	// In the product's module (the root, two directories up), whose graph it is.
	list := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	list.Dir = filepath.Join("..", "..")
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "gonum.org/v1/plot") {
			t.Fatalf("%s is in the import graph of the product (%s)", dep, strings.Join(pkgs, ", "))
		}
	}
	// Accept: the benchmark itself does import it (the check above is not vacuous).
	out, err = exec.Command("go", "list", "-deps", "-test", mod+"/e2e/bursts").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps -test e2e/bursts: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "gonum.org/v1/plot\n") {
		t.Fatal("e2e/bursts does not import gonum.org/v1/plot: the check above proves nothing")
	}
}

// The window plot draws every trace it is given and refuses a trace without series.
func TestWindowPlotWritesEachTrace(t *testing.T) {
	dir := t.TempDir()
	s := map[string][]WindowSeries{"burst": {{Policy: "blueprint", Points: []WindowPoint{{0, 80, 0.5}, {30, 82, 0.6}}}}}
	path := filepath.Join(dir, "w.png")
	if err := WindowPlot(path, []string{"burst"}, s); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("no picture written: %v", err)
	}
	if err := WindowPlot(filepath.Join(dir, "x.png"), []string{"burst", "day"}, s); err == nil || !strings.Contains(err.Error(), "day") {
		t.Fatalf("a trace without series must be refused naming it, got %v", err)
	}
	if err := WindowPlot(filepath.Join(dir, "x.gif"), []string{"burst"}, s); err == nil {
		t.Fatal("a .gif must be refused")
	}
}

// The node plot leaves out the retired policies, which must still be ModelPolicies' names (or a
// rename would draw them again), and letters each autoscaled policy once across the traces, a
// policy only a later trace has after the one before it there.
func TestNodePlotLettersThePoliciesAndLeavesOutTheRetired(t *testing.T) {
	var names []string
	for _, p := range ModelPolicies(10) {
		names = append(names, p.Name)
	}
	for _, n := range NodePlotLeavesOut {
		if !slices.Contains(names, n) {
			t.Errorf("NodePlotLeavesOut names %q, no policy of ModelPolicies", n)
		}
	}
	planes := map[string][]Point{
		"burst": {{Name: "fixed-4", Fixed: 4, Warm: 90, Idle: 4000}, {Name: "fixed-8", Fixed: 8, Warm: 99.5, Idle: 5000},
			{Name: "blueprint", Warm: 80, Idle: 4200}, {Name: NodePlotLeavesOut[0], Warm: 96, Idle: 5200}, {Name: "arrivals", Warm: 85, Idle: 3900},
			{Name: "arrivals, rounded", Warm: 92, Idle: 4500}},
		"day": {{Name: "fixed-8", Fixed: 8, Warm: 99.5, Idle: 5000}, {Name: "blueprint", Warm: 90, Idle: 4600},
			{Name: "arrivals", Warm: 95, Idle: 4400}, {Name: "arrivals, schedule", Warm: 97, Idle: 4800}, {Name: "arrivals, rounded", Warm: 96, Idle: 4700}},
	}
	traces := []string{"burst", "day"}
	got := policyLetters(traces, planes)
	want := []policyLetter{{"blueprint", "A"}, {NodePlotLeavesOut[0], "B"}, {"arrivals", "C"}, {"arrivals, schedule", "D"}, {"arrivals, rounded", "E"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("letters %v, want %v", got, want)
	}
	path := filepath.Join(t.TempDir(), "nodes.svg")
	if err := NodePlot(path, traces, planes); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("boot+poll+sync")) {
		t.Error("the node plot draws a retired policy")
	}
	for _, key := range []string{"A  blueprint", "B  arrivals", "C  arrivals, schedule", "D  arrivals, rounded"} {
		if !bytes.Contains(b, []byte(">"+key+"<")) {
			t.Errorf("the key has no %q", key)
		}
	}
	if err := NodePlot(filepath.Join(t.TempDir(), "n.png"), []string{"burst", "loadday"}, planes); err == nil || !strings.Contains(err.Error(), "loadday") {
		t.Errorf("a trace without points must be refused naming it, got %v", err)
	}
}
