package advisor

// The advice's pictures: per pool, the settings' plane (warm hits against cost, each ladder a
// line up its knob, the recommendation marked) and the busiest day as the recommendation and the
// fixed pool at the target would have run it.

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"warmpool.local/warm-pool-autoscaling-keda/chart"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// plotBelowTarget: the settings plot shows the autoscaled settings from this many points of warm
// hits below the target up, and the fixed pools from the lowest of those up.
const plotBelowTarget = 6

var (
	colorPick = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	// one per autoscaled ladder, in the order ladders lists them
	ladderColors = []color.RGBA{{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255},
		{R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255}, {R: 23, G: 190, B: 207, A: 255},
		{R: 227, G: 119, B: 194, A: 255}, {R: 188, G: 189, B: 34, A: 255}, {R: 23, G: 60, B: 120, A: 255}}
)

// plotFile is where a pool's plot goes: the pool's name made safe for a file name.
func plotFile(dir, pool, what string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, pool)
	return filepath.Join(dir, safe+"-"+what+".png")
}

// WritePlots draws each pool's two pictures into dir (made if missing), as PNG files named by
// the pool, and returns their paths: the settings replayed (warm hits against cost) and, when a
// setting is recommended, its busiest day. advice is as Advise returns it, which keeps the days
// it replayed for the second picture.
func WritePlots(dir string, advice []PoolAdvice, p Params) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, a := range advice {
		path := plotFile(dir, a.Pool, "settings")
		if err := settingsPlot(path, a, p); err != nil {
			return paths, err
		}
		paths = append(paths, path)
		if a.Recommended == nil {
			continue
		}
		path = plotFile(dir, a.Pool, "busiest-day")
		if err := busiestDayPlot(path, a, a.days, p); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func costLabel(p Params) string {
	if p.SandboxesPerNode == 0 {
		return "idle warm pod-seconds per day"
	}
	if p.NodePricePerHour > 0 {
		return fmt.Sprintf("$ per day (nodes at $%g an hour)", p.NodePricePerHour)
	}
	return "node-seconds per day"
}

func costValue(o Outcome, p Params) float64 {
	if p.SandboxesPerNode > 0 && p.NodePricePerHour > 0 {
		return o.Cost / 3600 * p.NodePricePerHour
	}
	return o.Cost
}

// settingsPlot: every setting replayed, warm hits against cost; a ladder is a line through its
// levels in order, the fixed pools labelled by size, the recommendation a large ring, labelled.
// The axes fit the settings shown: the autoscaled ones from plotBelowTarget points under the
// target up, the fixed pools from the lowest of those (or the target) up, none dearer than a
// little beyond the recommendation and the cheapest fixed pool at the target. The legend is under
// the plot.
func settingsPlot(path string, a PoolAdvice, p Params) error {
	if len(a.Outcomes) == 0 {
		return errors.New("settings plot: nothing was replayed")
	}
	pl := chart.New(fmt.Sprintf("pool %s: %d day(s), %d claims: the settings replayed", a.Pool, a.Days, a.Claims), costLabel(p), "warm hits (% of claims)")
	// The plane near the target: from a few points below it, up to a little beyond the dearer
	// of the recommendation and the cheapest fixed pool at the target.
	target := 100 * p.WarmHitTarget
	xCut := 0.0
	for _, o := range a.Outcomes {
		if o.DaysAtTarget >= a.Need && (o.policy.Fixed > 0 || (a.Recommended != nil && o.Name == a.Recommended.Name)) {
			xCut = max(xCut, costValue(o, p))
			if o.policy.Fixed > 0 {
				break
			}
		}
	}
	if a.Recommended != nil {
		xCut = max(xCut, costValue(*a.Recommended, p))
	}
	if xCut == 0 {
		for _, o := range a.Outcomes {
			xCut = max(xCut, costValue(o, p))
		}
	}
	xCut *= 1.25
	// The autoscaled settings decide how far below the target the plot goes; the fixed pools'
	// line enters from there (the smallest sizes, far below, would squeeze the settings at the
	// target into a strip).
	yFloor := target
	if a.Recommended != nil {
		yFloor = min(yFloor, 100*a.Recommended.WarmShare)
	}
	for _, o := range a.Outcomes {
		if w := 100 * o.WarmShare; !o.Margin && o.policy.Fixed == 0 && w >= target-plotBelowTarget && costValue(o, p) <= xCut {
			yFloor = min(yFloor, w)
		}
	}
	byLadder := map[string][]Outcome{}
	var order []string
	for _, o := range a.Outcomes {
		if o.Margin || 100*o.WarmShare < yFloor || costValue(o, p) > xCut {
			continue // the margin's steps: the recommendation is ringed
		}
		if _, ok := byLadder[o.Ladder]; !ok {
			order = append(order, o.Ladder)
		}
		byLadder[o.Ladder] = append(byLadder[o.Ladder], o)
	}
	// The axes: the settings shown, the recommendation and the target line.
	loX, hiX, loY := math.Inf(1), math.Inf(-1), target
	fit := func(o Outcome) {
		loX, hiX, loY = min(loX, costValue(o, p)), max(hiX, costValue(o, p)), min(loY, 100*o.WarmShare)
	}
	for _, os := range byLadder {
		for _, o := range os {
			fit(o)
		}
	}
	if a.Recommended != nil {
		fit(*a.Recommended)
	}
	if math.IsInf(loX, 1) { // nothing near the target: every setting
		for _, o := range a.Outcomes {
			fit(o)
		}
	}
	spanX := hiX - loX
	if spanX <= 0 {
		spanX = max(hiX, 1) / 10
	}
	spanY := max(100-loY, 0.5)
	xMin, xMax := max(loX-0.05*spanX, 0), hiX+0.05*spanX

	const radius = 3
	var avoid plotter.XYs
	var fixedLabels []chart.Label
	auto := 0
	for _, name := range order {
		os := byLadder[name]
		sort.Slice(os, func(i, j int) bool { return os[i].Level < os[j].Level })
		xys := make(plotter.XYs, len(os))
		for i, o := range os {
			xys[i] = plotter.XY{X: costValue(o, p), Y: 100 * o.WarmShare}
		}
		c, legend, shape := chart.Fixed, "fixed pools (labelled with their size)", draw.GlyphDrawer(draw.CircleGlyph{})
		if name != "fixed" {
			knob := " (headroom)"
			if strings.Contains(name, ", schedule") {
				knob = " (its warm floor)"
			}
			c, legend, shape = ladderColors[auto%len(ladderColors)], name+knob, draw.TriangleGlyph{}
			auto++
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color, points.Color, points.Shape, points.Radius = c, c, shape, vg.Points(radius)
		pl.Add(line, points)
		pl.Legend.Add(legend, line, points)
		if name != "fixed" {
			avoid = append(avoid, xys...) // the headroom is in the table
			continue
		}
		for i, o := range os {
			fixedLabels = append(fixedLabels, chart.Label{X: xys[i].X, Y: xys[i].Y, Text: fmt.Sprint(o.policy.Fixed), Color: c})
		}
	}
	line, err := chart.TargetLine(target, xMin, xMax)
	if err != nil {
		return err
	}
	pl.Add(line)
	pl.Legend.Add(fmt.Sprintf("the target, %g%% warm hits", target), line)
	// The labels, the recommendation's first: a fixed size with no room beside its point is left
	// out rather than printed over another.
	labels := chart.NewLabels(vg.Points(radius + 1))
	labels.Avoid = avoid
	if r := a.Recommended; r != nil {
		xy := plotter.XY{X: costValue(*r, p), Y: 100 * r.WarmShare}
		s, err := plotter.NewScatter(plotter.XYs{xy})
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorPick, Radius: vg.Points(8), Shape: draw.RingGlyph{}}
		pl.Add(s)
		pl.Legend.Add("recommended: "+r.Name, s)
		labels.Labels = append(labels.Labels, chart.Label{X: xy.X, Y: xy.Y, Text: "recommended", Color: colorPick, Radius: vg.Points(9)})
	}
	labels.Labels = append(labels.Labels, fixedLabels...)
	pl.Add(labels)
	// After every Add, which widens the axes to the data's range.
	pl.X.Min, pl.X.Max = xMin, xMax
	pl.Y.Min, pl.Y.Max = loY-0.1*spanY, 100+0.06*spanY
	return chart.SaveLegendOutside(pl, path, chart.Below)
}

// busiestDay is the day with the most claims held at once; among equal peaks, the one with the
// most claims (several days often share a peak, and the first of them may be a quiet one).
func busiestDay(ds []*replay.Trace) int {
	best, bestPeak := 0, -1
	for i, d := range ds {
		if p := d.Peak(); p > bestPeak || p == bestPeak && len(d.Arrivals) > len(ds[best].Arrivals) {
			best, bestPeak = i, p
		}
	}
	return best
}

// busiestDayPlot: the claims held on the busiest day, and the pool's size as the recommendation
// and as the cheapest fixed pool at the target would have held it.
func busiestDayPlot(path string, a PoolAdvice, ds []*replay.Trace, p Params) error {
	if len(ds) == 0 {
		return errors.New("busiest-day plot: no days")
	}
	i := busiestDay(ds)
	day := ds[i]
	unit, scale := "minutes", time.Minute
	if day.Duration > 3*time.Hour {
		unit, scale = "hours", time.Hour
	}
	pl := chart.New(fmt.Sprintf("pool %s, its busiest day (%d of %d, %d claims, peak %d held)", a.Pool, i+1, len(ds), len(day.Arrivals), day.Peak()),
		unit+" into the day", "sandboxes")
	end := max(day.Duration, day.End())
	x := func(d time.Duration) float64 { return float64(d) / float64(scale) }
	steps := func(xys plotter.XYs, c color.Color, width vg.Length, legend string) (*plotter.Line, error) {
		l, err := chart.Steps(xys, x(end), c, width)
		if err != nil {
			return nil, err
		}
		pl.Legend.Add(legend, l)
		return l, nil
	}
	addSteps := func(xys plotter.XYs, c color.Color, width vg.Length, legend string) error {
		l, err := steps(xys, c, width, legend)
		if err == nil {
			pl.Add(l)
		}
		return err
	}
	var xys plotter.XYs
	for _, s := range day.HeldSteps() {
		xys = append(xys, plotter.XY{X: x(s.At), Y: float64(s.Claims)})
	}
	claims, err := steps(xys, chart.Demand, vg.Points(1), "claims held") // drawn last, over the pools
	if err != nil {
		return err
	}
	loop := p.loop()
	rec := replay.Simulate(day, a.Recommended.policy, loop, uint64(i+1))
	xys = nil
	for _, s := range rec.Sizes {
		xys = append(xys, plotter.XY{X: x(s.At), Y: float64(s.Replicas)})
	}
	if err := addSteps(xys, colorPick, vg.Points(1.5), fmt.Sprintf("warm pool, recommended %s (%.1f%% warm hits this day)", a.Recommended.Name, 100*rec.WarmShare())); err != nil {
		return err
	}
	for _, o := range a.Outcomes {
		if o.policy.Fixed == 0 || o.DaysAtTarget < a.Need || o.Name == a.Recommended.Name {
			continue
		}
		r := replay.Simulate(day, o.policy, loop, uint64(i+1))
		if err := addSteps(plotter.XYs{{X: 0, Y: float64(o.policy.Fixed)}}, chart.Fixed, vg.Points(1.5),
			fmt.Sprintf("warm pool, the cheapest fixed pool at the target: %d (%.1f%% this day)", o.policy.Fixed, 100*r.WarmShare())); err != nil {
			return err
		}
		break // the outcomes list fixed pools by size: the first at the target is the cheapest
	}
	pl.Add(claims)
	pl.X.Min, pl.Y.Min = 0, 0
	return chart.SaveLegendOutside(pl, path, chart.Below)
}
