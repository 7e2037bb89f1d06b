// Package chart is what the repository's plots share: their size, the colours that mean the same
// thing in every plot, a new plot with its axes and grid, the lines every plot draws alike (the
// target, steps), labels that do not overlap, and how plots are saved, alone, in a grid or with
// the legend outside (PNG or SVG by the file's extension). The burst
// benchmark (e2e/bursts) and advise draw with it; gonum.org/v1/plot stays out of the program,
// the exporter and verify (e2e/bursts' TestPlottingStaysOutOfTheProductsImportGraph).
package chart

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Width and Height: wide enough for a dozen labelled points.
const Width, Height = 9 * vg.Inch, 5.5 * vg.Inch

// The colours every plot gives the same thing.
var (
	Fixed  = color.RGBA{R: 90, G: 90, B: 90, A: 255}  // a fixed pool
	Target = color.RGBA{R: 44, G: 160, B: 44, A: 255} // the warm-hit target
	Demand = color.RGBA{A: 255}                       // the claims held
)

// New is a plot with its title, its axes' labels and a grid under what is added after it.
func New(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.Add(plotter.NewGrid())
	return p
}

// CheckFormat refuses a path whose extension is not one Save writes.
func CheckFormat(path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
		return nil
	default:
		return fmt.Errorf("plot %s: write .png or .svg, not %q", path, ext)
	}
}

// Save writes p to path at Width x Height, in the format its extension names.
func Save(p *plot.Plot, path string) error {
	if err := CheckFormat(path); err != nil {
		return err
	}
	if err := p.Save(Width, Height, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
