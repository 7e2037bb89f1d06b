package chart

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Save writes the formats it names and refuses any other extension, writing nothing.
func TestSaveWritesPNGAndSVGOnly(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.png", "a.svg"} {
		if err := Save(plot.New(), filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	path := filepath.Join(dir, "a.jpg")
	err := Save(plot.New(), path)
	if err == nil || err.Error() != `plot `+path+`: write .png or .svg, not ".jpg"` {
		t.Fatalf("a .jpg: got %v", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Fatalf("a refused plot left %s behind", path)
	}
}

// Labels drawn never cover each other nor a glyph, stay inside the data area, and the first
// listed are placed first: a crowd of labels on one point keeps the first and drops what has no
// room.
func TestLabelsNeverOverlap(t *testing.T) {
	p := plot.New()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 10, 0, 10
	c := draw.New(vgimg.New(4*vg.Inch, 3*vg.Inch))
	var ls []Label
	for i := range 40 {
		ls = append(ls, Label{X: 5, Y: 5, Text: fmt.Sprintf("label %d", i)})
	}
	ls = append(ls, Label{X: 50, Y: 5, Text: "outside"}, Label{X: 0.2, Y: 9.8, Text: "a corner"})
	l := NewLabels(vg.Points(4), ls...)
	l.Avoid = plotter.XYs{{X: 5.5, Y: 5}}
	placed := l.Place(c, p)
	if len(placed) == 0 || placed[0].Index != 0 {
		t.Fatalf("the first label is not placed first: %+v", placed)
	}
	if len(placed) >= 40 {
		t.Fatalf("%d labels placed around one point: some must overlap", len(placed))
	}
	tx, ty := p.Transforms(&c)
	glyph := func(x, y float64) vg.Rectangle {
		r := vg.Points(4)
		return vg.Rectangle{Min: vg.Point{X: tx(x) - r, Y: ty(y) - r}, Max: vg.Point{X: tx(x) + r, Y: ty(y) + r}}
	}
	corner := false
	for i, a := range placed {
		if ls[a.Index].Text == "outside" {
			t.Error("a label of a point outside the data area placed")
		}
		corner = corner || ls[a.Index].Text == "a corner"
		if a.Box.Min.X < c.Min.X || a.Box.Max.X > c.Max.X || a.Box.Min.Y < c.Min.Y || a.Box.Max.Y > c.Max.Y {
			t.Errorf("%q leaves the data area: %+v", ls[a.Index].Text, a.Box)
		}
		for _, g := range []vg.Rectangle{glyph(5, 5), glyph(5.5, 5), glyph(0.2, 9.8)} {
			if overlaps(a.Box, g, 0) {
				t.Errorf("%q covers a glyph", ls[a.Index].Text)
			}
		}
		for _, b := range placed[:i] {
			if overlaps(a.Box, b.Box, 0) {
				t.Errorf("%q and %q overlap", ls[a.Index].Text, ls[b.Index].Text)
			}
		}
	}
	if !corner {
		t.Error("a label in the data area's corner found no room inside it")
	}
}

// SaveFigure grows the picture by its legend: beside the plot, wider; under it, taller.
func TestSaveFigurePutsTheLegendOutside(t *testing.T) {
	dir := t.TempDir()
	for _, side := range []Side{Right, Below} {
		p := plot.New()
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(l)
		p.Legend.Add("a legend entry long enough to run off a plot of this width unless the picture grows to hold it", l)
		path := filepath.Join(dir, fmt.Sprintf("%d.png", side))
		if err := SaveLegendOutside(p, path, side); err != nil {
			t.Fatal(err)
		}
		cfg := pngSize(t, path)
		w, h := int(Width.Dots(vgimg.DefaultDPI)), int(Height.Dots(vgimg.DefaultDPI))
		if side == Right && !(cfg.Width > w && cfg.Height == h) || side == Below && !(cfg.Width == w && cfg.Height > h) {
			t.Errorf("legend side %d: %dx%d against the plot's %dx%d", side, cfg.Width, cfg.Height, w, h)
		}
	}
	if err := SaveLegendOutside(plot.New(), filepath.Join(dir, "a.jpg"), Right); err == nil {
		t.Error("a .jpg written")
	}
}

// SaveGrid's picture is its cells side by side and row under row, each w x h; it refuses a
// format it does not write and a grid without plots.
func TestSaveGridSizesThePictureByItsCells(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grid.png")
	w, h := 2*vg.Inch, 1.5*vg.Inch
	if err := SaveGrid(path, w, h, [][]*plot.Plot{{plot.New(), plot.New(), plot.New()}, {plot.New(), plot.New(), plot.New()}}); err != nil {
		t.Fatal(err)
	}
	cfg := pngSize(t, path)
	if want := [2]int{int((3 * w).Dots(vgimg.DefaultDPI)), int((2 * h).Dots(vgimg.DefaultDPI))}; [2]int{cfg.Width, cfg.Height} != want {
		t.Errorf("a 2 x 3 grid of %v x %v cells: %dx%d, want %dx%d", w, h, cfg.Width, cfg.Height, want[0], want[1])
	}
	if err := SaveGrid(filepath.Join(dir, "a.jpg"), w, h, [][]*plot.Plot{{plot.New()}}); err == nil {
		t.Error("a .jpg written")
	}
	if err := SaveGrid(filepath.Join(dir, "none.png"), w, h, nil); err == nil {
		t.Error("a grid without plots written")
	}
}

// Steps holds each value to the next point and the last to end; TargetLine is dashed in the
// target's colour; neither shares its dashes with another line.
func TestStepsAndTargetLine(t *testing.T) {
	xys := plotter.XYs{{X: 0, Y: 1}, {X: 2, Y: 3}}
	l, err := Steps(xys, 5, Demand, vg.Points(2))
	if err != nil {
		t.Fatal(err)
	}
	if want := (plotter.XYs{{X: 0, Y: 1}, {X: 2, Y: 3}, {X: 5, Y: 3}}); len(l.XYs) != 3 || l.XYs[2] != want[2] || l.StepStyle != plotter.PostStep || l.Width != vg.Points(2) {
		t.Errorf("steps: %v (style %v, width %v), want %v post-step at 2 points", l.XYs, l.StepStyle, l.Width, want)
	}
	if len(xys) != 2 {
		t.Errorf("Steps changed its caller's points: %v", xys)
	}
	if _, err := Steps(nil, 5, Demand, 1); err == nil {
		t.Error("steps of no points drawn")
	}
	target, err := TargetLine(99, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if target.Color != Target || len(target.Dashes) == 0 || target.XYs[0] != (plotter.XY{X: 0, Y: 99}) || target.XYs[1] != (plotter.XY{X: 10, Y: 99}) {
		t.Errorf("target line: %+v", target)
	}
	target.Dashes[0] = 0
	if Dashes()[0] == 0 {
		t.Error("a line's dashes changed every line's")
	}
}

// pngSize is the size of the PNG picture at path.
func pngSize(t *testing.T, path string) image.Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
