package chart

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Label is a text beside a point of the data, in its colour.
type Label struct {
	X, Y  float64
	Text  string
	Color color.Color
	// Radius, when not 0, is this point's glyph's radius in place of the Labels' Radius.
	Radius vg.Length
}

// Labels is a plotter of texts placed so that every one drawn can be read: each is tried at
// places around its point, nearest first (right, above right, below right, above, below, left,
// above left, below left, then the same a little further out), and drawn at the first where it
// covers no label already placed, no glyph (its own point's, the other labels' and Avoid's) and
// stays inside the data area. A label with no such place is left out. The labels earlier in the
// list are placed first: put the ones that must be read first.
type Labels struct {
	Labels []Label
	// Avoid are the centres of the other glyphs drawn, which no label may cover.
	Avoid plotter.XYs
	// Radius is the glyphs' radius (the room a label keeps from a point).
	Radius vg.Length
	// TextStyle is the labels' font; each label's Color replaces its colour.
	TextStyle text.Style
	// Background, when not nil, is filled behind each label drawn, so a line under it does not
	// hide it.
	Background color.Color
}

// NewLabels returns labels in the plot's default font at 10 points, kept radius from their
// points, on a translucent white.
func NewLabels(radius vg.Length, labels ...Label) *Labels {
	return &Labels{Labels: labels, Radius: radius,
		TextStyle:  text.Style{Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler},
		Background: color.NRGBA{R: 255, G: 255, B: 255, A: 200}}
}

// Placed is where Place put a label: the index into Labels, and the text's bounds.
type Placed struct {
	Index int
	Box   vg.Rectangle
}

// Plot draws the labels Place finds room for.
func (l *Labels) Plot(c draw.Canvas, p *plot.Plot) {
	for _, pl := range l.Place(c, p) {
		lb := l.Labels[pl.Index]
		if l.Background != nil {
			b := pl.Box
			c.FillPolygon(l.Background, []vg.Point{b.Min, {X: b.Max.X, Y: b.Min.Y}, b.Max, {X: b.Min.X, Y: b.Max.Y}})
		}
		sty := l.style(lb)
		r := sty.Rectangle(lb.Text)
		c.FillText(sty, vg.Point{X: pl.Box.Min.X - r.Min.X, Y: pl.Box.Min.Y - r.Min.Y}, lb.Text)
	}
}

func (l *Labels) radius(lb Label) vg.Length {
	if lb.Radius != 0 {
		return lb.Radius
	}
	return l.Radius
}

func (l *Labels) style(lb Label) text.Style {
	sty := l.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	if lb.Color != nil {
		sty.Color = lb.Color
	}
	return sty
}

// Place says where each label that fits goes, in the order placed, on the canvas c of p's data;
// labels whose points lie outside the data area are not placed.
func (l *Labels) Place(c draw.Canvas, p *plot.Plot) []Placed {
	tx, ty := p.Transforms(&c)
	var glyphs []vg.Rectangle
	glyph := func(x, y float64, r vg.Length) {
		pt := vg.Point{X: tx(x), Y: ty(y)}
		glyphs = append(glyphs, vg.Rectangle{Min: pt.Sub(vg.Point{X: r, Y: r}), Max: pt.Add(vg.Point{X: r, Y: r})})
	}
	for _, a := range l.Avoid {
		glyph(a.X, a.Y, l.Radius)
	}
	for _, lb := range l.Labels {
		glyph(lb.X, lb.Y, l.radius(lb))
	}
	const margin = 1 // points kept between two labels
	free := func(b vg.Rectangle, placed []Placed) bool {
		if b.Min.X < c.Min.X || b.Max.X > c.Max.X || b.Min.Y < c.Min.Y || b.Max.Y > c.Max.Y {
			return false
		}
		for _, g := range glyphs {
			if overlaps(b, g, 0) {
				return false
			}
		}
		for _, q := range placed {
			if overlaps(b, q.Box, margin) {
				return false
			}
		}
		return true
	}
	var placed []Placed
	for i, lb := range l.Labels {
		pt := vg.Point{X: tx(lb.X), Y: ty(lb.Y)}
		if lb.Text == "" || !c.Contains(pt) {
			continue
		}
		size := l.style(lb).Rectangle(lb.Text).Size()
		for _, b := range candidates(pt, size, l.radius(lb)) {
			if free(b, placed) {
				placed = append(placed, Placed{Index: i, Box: b})
				break
			}
		}
	}
	return placed
}

// candidates are the boxes of a text of size around a glyph of radius r at pt, nearest first;
// then the same 8 points further out.
func candidates(pt, size vg.Point, r vg.Length) []vg.Rectangle {
	dirs := [][2]int{{1, 0}, {1, 1}, {1, -1}, {0, 1}, {0, -1}, {-1, 0}, {-1, 1}, {-1, -1}}
	var out []vg.Rectangle
	for _, dist := range []vg.Length{r + vg.Points(2), r + vg.Points(10)} {
		for _, dir := range dirs {
			var lo vg.Point
			diag := dir[0] != 0 && dir[1] != 0
			off := dist
			if diag {
				off = max(dist*7/10, r+vg.Points(0.5))
			}
			lo.X, lo.Y = labelStart(dir[0], pt.X, off, size.X), labelStart(dir[1], pt.Y, off, size.Y)
			out = append(out, vg.Rectangle{Min: lo, Max: lo.Add(size)})
		}
	}
	return out
}

// overlaps says whether a and b, each grown by margin, share any area.
func overlaps(a, b vg.Rectangle, margin vg.Length) bool {
	return a.Min.X < b.Max.X+margin && b.Min.X < a.Max.X+margin && a.Min.Y < b.Max.Y+margin && b.Min.Y < a.Max.Y+margin
}

// labelStart is where a label of size starts along one axis, off from the point at: after it
// (dir 1), before it (-1) or centred on it (0).
func labelStart(dir int, at, off, size vg.Length) vg.Length {
	switch dir {
	case 1:
		return at + off
	case -1:
		return at - off - size
	default:
		return at - size/2
	}
}
