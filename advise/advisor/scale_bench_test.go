package advisor

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"warmpool.local/warm-pool-autoscaling-keda/chart"
)

// scalePoint is one history of the scaling benchmark: days of perDay claims each.
type scalePoint struct {
	series      string
	days        int
	perDay      int
	claims      int
	wall        time.Duration
	peakRSSByte int64
}

// BenchmarkAdviseScale runs the built advise binary, as a team would, on histories of growing
// size: 10^4, 10^5 and 10^6 claims over 14 days, then 14, 30 and 90 days of 6,600 claims a day,
// and reads each run's wall time and peak memory (the process's maximum resident set). It prints
// the table advise/README.md shows and the slope of time against claims on a log-log scale, and
// writes the picture to ADVISE_SCALE_PLOT (docs/advise/scale.png from the repository's root).
// ADVISE_SCALE_SEED draws other histories of the same sizes (default 1).
//
//	go test -run '^$' -bench '^BenchmarkAdviseScale$' -benchtime 1x ./advise/advisor
func BenchmarkAdviseScale(b *testing.B) {
	seed := uint64(envInt(b, "ADVISE_SCALE_SEED", 1))
	dir := b.TempDir()
	bin := filepath.Join(dir, "advise")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		b.Fatalf("building advise: %v\n%s", err, out)
	}
	points := []scalePoint{
		{series: "claims", days: 14, perDay: 10_000 / 14},
		{series: "claims", days: 14, perDay: 100_000 / 14},
		{series: "claims", days: 14, perDay: 1_000_000 / 14},
		{series: "days", days: 14, perDay: 6600},
		{series: "days", days: 30, perDay: 6600},
		{series: "days", days: 90, perDay: 6600},
	}
	for range b.N {
		for i := range points {
			pt := &points[i]
			path := filepath.Join(dir, fmt.Sprintf("history-%d-%d.csv", pt.days, pt.perDay))
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			pt.claims, err = writeScaleHistory(f, pt.days, pt.perDay, seed)
			if err == nil {
				err = f.Close()
			}
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(bin, "--history", path)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			pt.wall = time.Since(start)
			if err != nil {
				b.Fatalf("advise on %d days of %d claims: %v\n%s", pt.days, pt.perDay, err, out)
			}
			pt.peakRSSByte = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
			os.Remove(path)
		}
	}
	fmt.Printf("| history | claims | time | peak memory |\n|---|---:|---:|---:|\n")
	for _, pt := range points {
		fmt.Printf("| %d days of %d a day | %d | %.1f s | %d MB |\n", pt.days, pt.perDay, pt.claims, pt.wall.Seconds(), pt.peakRSSByte>>20)
	}
	fmt.Printf("slope of time against claims (log-log, 14 days): %.2f; against days (6,600 a day): %.2f\n",
		logSlope(points[:3]), logSlope(points[3:]))
	if path := os.Getenv("ADVISE_SCALE_PLOT"); path != "" {
		if err := scalePlot(path, points); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("wrote %s\n", path)
	}
}

// logSlope is the least-squares slope of log(time) against log(claims).
func logSlope(pts []scalePoint) float64 {
	var sx, sy, sxx, sxy float64
	for _, p := range pts {
		x, y := math.Log(float64(p.claims)), math.Log(p.wall.Seconds())
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(pts))
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// scalePlot draws time against claims on log-log axes, one line per series, each point labelled
// with its peak memory.
func scalePlot(path string, pts []scalePoint) error {
	pl := plot.New()
	pl.Title.Text = "advise: time against claims (log-log), labelled with peak memory"
	pl.X.Label.Text = "claims in the history"
	pl.Y.Label.Text = "wall time, seconds"
	pl.X.Scale, pl.Y.Scale = plot.LogScale{}, plot.LogScale{}
	// Axes fitted to the points with room for their labels, ticked at 1-2-5 steps.
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = math.Inf(1), 0, math.Inf(1), 0
	for _, p := range pts {
		pl.X.Min, pl.X.Max = min(pl.X.Min, float64(p.claims)/2), max(pl.X.Max, float64(p.claims)*2)
		pl.Y.Min, pl.Y.Max = min(pl.Y.Min, p.wall.Seconds()/1.5), max(pl.Y.Max, p.wall.Seconds()*1.5)
	}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = steps125{}, steps125{}
	pl.Add(plotter.NewGrid())
	pl.Legend.Top, pl.Legend.Left = true, true
	for i, series := range []struct{ name, legend string }{
		{"claims", "14 days, more claims a day"},
		{"days", "6,600 claims a day, more days"},
	} {
		var xys plotter.XYs
		var labels []string
		for _, p := range pts {
			if p.series == series.name {
				xys = append(xys, plotter.XY{X: float64(p.claims), Y: p.wall.Seconds()})
				labels = append(labels, fmt.Sprintf("%d days, %d MB", p.days, p.peakRSSByte>>20))
			}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color = chart.Fixed
		points.Shape = draw.CircleGlyph{}
		if i == 1 {
			line.Color, points.Color = chart.Target, chart.Target
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for j := range lab.TextStyle {
			// The series' labels on either side of their points, so the two never meet.
			lab.TextStyle[j].XAlign, lab.TextStyle[j].YAlign = draw.XRight, draw.YBottom
			if i == 1 {
				lab.TextStyle[j].XAlign, lab.TextStyle[j].YAlign = draw.XLeft, draw.YTop
			}
		}
		pl.Add(line, points, lab)
		pl.Legend.Add(series.legend, line, points)
	}
	return chart.Save(pl, path)
}

// steps125 ticks a log axis at 1, 2 and 5 times each power of ten, labelled without exponents.
type steps125 struct{}

func (steps125) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * p; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ticks
}
