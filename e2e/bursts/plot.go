package bursts

// The benchmark's pictures, drawn with package chart's size, colours and Save.
// gonum.org/v1/plot is not imported by the program, the exporter or verify
// (TestPlottingStaysOutOfTheProductsImportGraph holds that).

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"warmpool.local/warm-pool-autoscaling-keda/chart"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

var (
	colorAuto     = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colorArrivals = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	colorSpec     = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	colorReady    = color.RGBA{R: 31, G: 119, B: 180, A: 255}
)

// ZoomFrom is where the frontier plot's right panel starts: the warm-hit
// shares a platform team chooses among.
const ZoomFrom = 90.0

// FrontierPlot writes the trade-off plane of one trace to path (.png or
// .svg): warm-hit share against idle warm-pod-seconds, one labelled point per
// policy, the fixed pools' frontier as a line through its points, and the
// goal's warm-hit share as a dashed line; on the left every policy, on the
// right the same plane from ZoomFrom% warm hits up.
func FrontierPlot(path, title string, points []Point) error {
	if len(points) == 0 {
		return errors.New("frontier plot: no points to plot")
	}
	if err := chart.CheckFormat(path); err != nil {
		return err
	}
	minWarm := GoalShare
	for _, pt := range points {
		minWarm = min(minWarm, pt.Warm)
	}
	all, err := frontierPanel(title+": all policies", points, max(0, minWarm-5))
	if err != nil {
		return err
	}
	zoom, err := frontierPanel(fmt.Sprintf("from %.0f%% warm hits up", ZoomFrom), points, ZoomFrom)
	if err != nil {
		return err
	}
	zoom.Legend = plot.NewLegend() // the left panel's legend serves both
	return chart.SaveGrid(path, chart.Width, chart.Height, [][]*plot.Plot{{all, zoom}})
}

func frontierPanel(title string, points []Point, yMin float64) (*plot.Plot, error) {
	p := chart.New(title, "idle warm-pod-seconds (Ready sandboxes nobody held, over the trace)", "warm hits (% of claims)")
	p.Legend.Top, p.Legend.Left = false, false

	var fixed, auto, arrivals plotter.XYs
	var fixedLabels, autoLabels, arrivalsLabels []string
	maxIdle := 0.0
	for _, pt := range points {
		maxIdle = max(maxIdle, pt.Idle)
		xy := plotter.XY{X: pt.Idle, Y: pt.Warm}
		switch {
		case pt.Fixed > 0:
			fixed = append(fixed, xy)
			fixedLabels = append(fixedLabels, fmt.Sprint(pt.Fixed))
		case strings.HasPrefix(pt.Name, "arrivals"):
			arrivals = append(arrivals, xy)
			arrivalsLabels = append(arrivalsLabels, pt.Name)
		default:
			auto = append(auto, xy)
			autoLabels = append(autoLabels, pt.Name)
		}
	}
	if l, err := frontierPlotLine(points); err != nil {
		return nil, err
	} else if l != nil {
		p.Add(l)
		p.Legend.Add("fixed pools' frontier", l)
	}
	target, err := chart.TargetLine(GoalShare, 0, max(maxIdle, 1)*1.15)
	if err != nil {
		return nil, err
	}
	p.Add(target)
	p.Legend.Add(fmt.Sprintf("%.0f%% warm hits", GoalShare), target)

	addScatter := func(xys plotter.XYs, labels []string, c color.Color, shape draw.GlyphDrawer, legend string) error {
		if len(xys) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: shape}
		p.Add(s)
		p.Legend.Add(legend, s)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = c
		}
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3)}
		p.Add(lb)
		return nil
	}
	if err := addScatter(fixed, fixedLabels, chart.Fixed, draw.CircleGlyph{}, "fixed pool (its size)"); err != nil {
		return nil, err
	}
	if err := addScatter(auto, autoLabels, colorAuto, draw.TriangleGlyph{}, "autoscaled (claims held)"); err != nil {
		return nil, err
	}
	if err := addScatter(arrivals, arrivalsLabels, colorArrivals, draw.SquareGlyph{}, "autoscaled (arrivals)"); err != nil {
		return nil, err
	}
	p.X.Min = 0
	p.X.Max = max(maxIdle, 1) * 1.15 // room for the labels
	p.Y.Min, p.Y.Max = yMin, 100.5
	return p, nil
}

// Step is a value from At (time since the trace started) on.
type Step struct {
	At    time.Duration
	Value float64
}

// Timeline is one policy's pool over a trace: the demand (claims alive), the
// pool's spec.replicas (what the autoscaler asked for) and its Ready warm
// sandboxes nobody holds.
type Timeline struct {
	Policy              string
	Demand, Spec, Ready []Step
	// Booting is the unheld sandboxes not yet Ready; Boots each boot that ended (At when its
	// sandbox became Ready, Value how many seconds after it was first seen).
	Booting, Boots []Step
}

// DemandSteps is the trace's claims alive as a step function, one step per
// create and per delete (replay's HeldSteps, as Steps).
func DemandSteps(tr *replay.Trace) []Step {
	held := tr.HeldSteps()
	steps := make([]Step, len(held))
	for i, h := range held {
		steps[i] = Step{At: h.At, Value: float64(h.Claims)}
	}
	return steps
}

// TimelinePlot writes a policy's timeline to path (.png or .svg): demand,
// spec.replicas and Ready warm sandboxes against minutes into the trace.
func TimelinePlot(path, title string, tl Timeline) error {
	if len(tl.Demand) == 0 && len(tl.Spec) == 0 && len(tl.Ready) == 0 {
		return errors.New("timeline plot: no series to plot")
	}
	p := chart.New(title, "minutes into the trace", "count")
	p.Legend.Top, p.Legend.Left = true, true
	end := time.Duration(0)
	for _, s := range [][]Step{tl.Demand, tl.Spec, tl.Ready} {
		if len(s) > 0 {
			end = max(end, s[len(s)-1].At)
		}
	}
	for _, series := range []struct {
		steps []Step
		name  string
		c     color.Color
		width vg.Length
	}{
		{tl.Demand, "demand (claims alive)", chart.Demand, vg.Points(1)},
		{tl.Spec, "pool spec.replicas (" + tl.Policy + ")", colorSpec, vg.Points(1.5)},
		{tl.Ready, "Ready warm sandboxes, unheld (" + tl.Policy + ")", colorReady, vg.Points(1)},
	} {
		if len(series.steps) == 0 {
			continue
		}
		l, err := chart.Steps(minuteXYs(series.steps), end.Minutes(), series.c, series.width)
		if err != nil {
			return err
		}
		p.Add(l)
		p.Legend.Add(series.name, l)
	}
	p.X.Min, p.Y.Min = 0, 0
	return chart.Save(p, path)
}

// minuteXYs are steps as points, in minutes from the trace's start.
func minuteXYs(steps []Step) plotter.XYs {
	xys := make(plotter.XYs, len(steps))
	for i, s := range steps {
		xys[i] = plotter.XY{X: s.At.Minutes(), Y: s.Value}
	}
	return xys
}

// WindowSeries is one policy's points across scale-down windows: warm hits against idle over the
// cheapest fixed pool reaching 99%, each point labelled with its window.
type WindowSeries struct {
	Policy string
	Points []WindowPoint
}

// WindowPoint is one window's mean over the seeds.
type WindowPoint struct {
	WindowSeconds int
	Warm          float64 // % of claims
	IdleRatio     float64 // idle over the cheapest fixed pool reaching 99%
}

var windowColors = []color.RGBA{
	{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
	{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
}

// WindowPlot writes, per trace, each policy as a line through its windows (labelled in seconds)
// on the plane of warm hits against idle cost relative to the cheapest fixed pool reaching 99%:
// a line that climbs steeply buys warm hits cheaply; one that runs right pays for them.
func WindowPlot(path string, traces []string, series map[string][]WindowSeries) error {
	if err := chart.CheckFormat(path); err != nil {
		return err
	}
	var panels []*plot.Plot
	for _, tr := range traces {
		p := chart.New(tr+" trace: scale-down window (s) per policy, model, mean over seeds", "idle / cheapest fixed pool reaching 99% warm hits", "warm hits (% of claims)")
		p.Legend.Top, p.Legend.Left = false, false
		if len(series[tr]) == 0 {
			return fmt.Errorf("window plot: no series for the %s trace", tr)
		}
		for i, s := range series[tr] {
			var xys plotter.XYs
			var labels []string
			for _, pt := range s.Points {
				xys = append(xys, plotter.XY{X: pt.IdleRatio, Y: pt.Warm})
				labels = append(labels, fmt.Sprint(pt.WindowSeconds))
			}
			c := windowColors[i%len(windowColors)]
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color, pts.Color, pts.Shape = c, c, draw.CircleGlyph{}
			p.Add(l, pts)
			p.Legend.Add(s.Policy, l, pts)
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
			if err != nil {
				return err
			}
			for j := range lb.TextStyle {
				lb.TextStyle[j].Color = c
			}
			lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(-10)}
			p.Add(lb)
		}
		one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: p.Y.Min}, {X: 1, Y: 100}})
		if err != nil {
			return err
		}
		one.Color, one.Dashes = chart.Fixed, chart.Dashes()
		p.Add(one)
		p.Legend.Add("the cheapest fixed pool reaching 99%", one)
		panels = append(panels, p)
	}
	for _, p := range panels[1:] {
		p.Legend = plot.NewLegend() // the first panel's legend serves all
	}
	return chart.SaveGrid(path, chart.Width, chart.Height, [][]*plot.Plot{panels})
}

// NodePlotLeavesOut are the policies BenchmarkNodes still tabulates that NodePlot does not draw:
// the first arrivals formula (the refill as boot + KEDA's poll + the HPA's sync), retired for a
// refill of one boot, which docs/bursts.md's section on nodes no longer discusses.
var NodePlotLeavesOut = []string{"arrivals, L = boot+poll+sync (before)"}

// NodePlot writes, per trace, the model's plane with nodes: mean warm hits against mean
// node-seconds over the seeds, the fixed pools labelled with their size and their frontier as a
// line, each autoscaled policy a glyph marked with a letter, the 99% line dashed; to the right, a
// key of the letters, one for every panel (a policy has the same letter in each). The policies
// in NodePlotLeavesOut are not drawn.
func NodePlot(path string, traces []string, planes map[string][]Point) error {
	if err := chart.CheckFormat(path); err != nil {
		return err
	}
	shown := map[string][]Point{}
	for _, tr := range traces {
		for _, pt := range planes[tr] {
			if !slices.Contains(NodePlotLeavesOut, pt.Name) {
				shown[tr] = append(shown[tr], pt)
			}
		}
		if len(shown[tr]) == 0 {
			return fmt.Errorf("node plot: no points for the %s trace", tr)
		}
	}
	letters := policyLetters(traces, shown)
	var panels []*plot.Plot
	for _, tr := range traces {
		p, err := nodePanel(tr+" trace, model with nodes K=8, D=45 s, consolidateAfter 30 s", shown[tr], letters)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}

	key := plot.NewLegend()
	thumb := func(c color.Color, shape draw.GlyphDrawer) plot.Thumbnailer {
		s, _ := plotter.NewScatter(plotter.XYs{{}})
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: shape}
		return s
	}
	frontier := &plotter.Line{LineStyle: draw.LineStyle{Color: chart.Fixed, Width: vg.Points(1.5)}}
	key.Add("fixed pools' frontier", frontier)
	key.Add("fixed pool (labelled with its size)", thumb(chart.Fixed, draw.CircleGlyph{}))
	key.Add(fmt.Sprintf("%.0f%% warm hits", GoalShare), &plotter.Line{LineStyle: draw.LineStyle{Color: chart.Target, Width: vg.Points(1),
		Dashes: chart.Dashes()}})
	for _, l := range letters {
		c, shape := nodePolicyStyle(l.name)
		key.Add(l.letter+"  "+l.name, thumb(c, shape))
	}
	return chart.SaveFigure(path, chart.Width*2/3, chart.Height, [][]*plot.Plot{panels}, key, chart.Right)
}

type policyLetter struct{ name, letter string }

// policyLetters gives each autoscaled policy of the planes a letter, A first, in the order the
// traces list them (a policy only some traces have goes after the one before it there, or first).
func policyLetters(traces []string, planes map[string][]Point) []policyLetter {
	var names []string
	for _, tr := range traces {
		at := -1 // where this trace's last policy is in names
		for _, pt := range planes[tr] {
			if pt.Fixed > 0 {
				continue
			}
			if i := slices.Index(names, pt.Name); i >= 0 {
				at = i
				continue
			}
			at++
			names = slices.Insert(names, at, pt.Name)
		}
	}
	out := make([]policyLetter, len(names))
	for i, n := range names {
		out[i] = policyLetter{n, letterOf(i)}
	}
	return out
}

// letterOf is A..Z, then AA, AB...
func letterOf(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return letterOf(i/26-1) + letterOf(i%26)
}

// nodePolicyStyle: the policies that follow the held claims are blue triangles, the arrivals
// policies red squares.
func nodePolicyStyle(name string) (color.Color, draw.GlyphDrawer) {
	if strings.HasPrefix(name, "arrivals") {
		return colorArrivals, draw.SquareGlyph{}
	}
	return colorAuto, draw.TriangleGlyph{}
}

// nodePanel is one trace's plane for NodePlot: from just below the lowest autoscaled policy up to
// 100% (the smallest fixed pools drop out), from just left of the cheapest point shown to just
// right of the dearest.
func nodePanel(title string, points []Point, letters []policyLetter) (*plot.Plot, error) {
	minWarm := GoalShare
	for _, pt := range points {
		if pt.Fixed == 0 {
			minWarm = min(minWarm, pt.Warm)
		}
	}
	yMin := math.Floor((minWarm-3)/5) * 5
	loX, hiX := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		if pt.Warm >= yMin {
			loX, hiX = min(loX, pt.Idle), max(hiX, pt.Idle)
		}
	}
	span := max(hiX-loX, 1)

	p := chart.New(title, "node-seconds (mean over seeds; launching nodes included)", "warm hits (% of claims)")
	xMin, xMax := loX-0.06*span, hiX+0.06*span

	if l, err := frontierPlotLine(points); err != nil {
		return nil, err
	} else if l != nil {
		p.Add(l)
	}
	target, err := chart.TargetLine(GoalShare, xMin, xMax)
	if err != nil {
		return nil, err
	}
	p.Add(target)

	const radius = 4
	var fixedLabels, policyLabels []chart.Label
	for _, pt := range points {
		if pt.Warm < yMin {
			continue // a small fixed pool, far below: its line enters from the bottom
		}
		c, shape := nodePolicyStyle(pt.Name)
		if pt.Fixed > 0 {
			c, shape = chart.Fixed, draw.CircleGlyph{}
		}
		s, err := plotter.NewScatter(plotter.XYs{{X: pt.Idle, Y: pt.Warm}})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(radius), Shape: shape}
		p.Add(s)
		if pt.Fixed > 0 {
			fixedLabels = append(fixedLabels, chart.Label{X: pt.Idle, Y: pt.Warm, Text: fmt.Sprint(pt.Fixed), Color: c})
			continue
		}
		i := slices.IndexFunc(letters, func(l policyLetter) bool { return l.name == pt.Name })
		policyLabels = append(policyLabels, chart.Label{X: pt.Idle, Y: pt.Warm, Text: letters[i].letter, Color: c})
	}
	// The policies' letters first: the key needs every one; a fixed size with no room beside its
	// point is left out rather than printed over another label.
	labels := chart.NewLabels(vg.Points(radius+1), append(policyLabels, fixedLabels...)...)
	labels.TextStyle.Font.Size = vg.Points(11)
	p.Add(labels)
	// After every Add, which widens the axes to the data's range.
	p.X.Min, p.X.Max = xMin, xMax
	p.Y.Min, p.Y.Max = yMin, 100.5
	return p, nil
}

// LiveDaySeries is one live-day row's timeline, live and model, minutes from the day's start.
type LiveDaySeries struct {
	Claims                []Step // the claims held (the same for both: the claims the harness created)
	LiveSpec, ModelSpec   []Step // the pool's spec.replicas
	LiveNodes, ModelNodes []Step // the nodes there, launching ones included
}

// LiveDayPlot writes a live-day row's timeline to path (.png or .svg): above, the claims held and
// the pool's spec.replicas, live (solid) and model (dashed); below, the nodes, live and model,
// on the same time axis.
func LiveDayPlot(path, title string, s LiveDaySeries) error {
	if err := chart.CheckFormat(path); err != nil {
		return err
	}
	if len(s.Claims) == 0 || len(s.LiveSpec) == 0 || len(s.ModelSpec) == 0 || len(s.LiveNodes) == 0 || len(s.ModelNodes) == 0 {
		return errors.New("live-day plot: a series is empty (claims, spec.replicas or nodes, live or model)")
	}
	end := time.Duration(0)
	for _, series := range [][]Step{s.Claims, s.LiveSpec, s.ModelSpec, s.LiveNodes, s.ModelNodes} {
		end = max(end, series[len(series)-1].At)
	}
	dashed := []vg.Length{vg.Points(5), vg.Points(3)}
	type line struct {
		steps []Step
		name  string
		c     color.Color
		width vg.Length
		dash  []vg.Length
	}
	panel := func(title, ylabel string, lines []line) (*plot.Plot, error) {
		p := chart.New(title, "minutes into the day", ylabel)
		p.Legend.Top, p.Legend.Left = true, true
		for _, l := range lines {
			pl, err := chart.Steps(minuteXYs(l.steps), end.Minutes(), l.c, l.width)
			if err != nil {
				return nil, err
			}
			pl.Dashes = l.dash
			p.Add(pl)
			p.Legend.Add(l.name, pl)
		}
		// Room above the highest line for the legend.
		top := 0.0
		for _, l := range lines {
			for _, st := range l.steps {
				top = max(top, st.Value)
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, end.Minutes(), 0, math.Max(1.35*top, 1)
		return p, nil
	}
	top, err := panel(title, "sandboxes", []line{
		{s.Claims, "claims held", chart.Demand, vg.Points(1), nil},
		{s.LiveSpec, "pool spec.replicas, live", colorSpec, vg.Points(1.5), nil},
		{s.ModelSpec, "pool spec.replicas, model", colorArrivals, vg.Points(1.5), dashed},
	})
	if err != nil {
		return err
	}
	bottom, err := panel("nodes (NodeClaims, launching ones included)", "nodes", []line{
		{s.LiveNodes, "nodes, live", colorReady, vg.Points(1.5), nil},
		{s.ModelNodes, "nodes, model", colorArrivals, vg.Points(1.5), dashed},
	})
	if err != nil {
		return err
	}
	return chart.SaveGrid(path, chart.Width, chart.Height*3/4, [][]*plot.Plot{{top}, {bottom}})
}

// frontierPlotLine is the fixed pools' frontier as a line (nil when it has fewer than two points).
func frontierPlotLine(points []Point) (*plotter.Line, error) {
	front := Frontier(points)
	if len(front) < 2 {
		return nil, nil
	}
	var xys plotter.XYs
	for _, pt := range front {
		xys = append(xys, plotter.XY{X: pt.Idle, Y: pt.Warm})
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width = chart.Fixed, vg.Points(1.5)
	return l, nil
}
