package chart

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Side is where SaveFigure puts the legend: outside the data, beside the plots or under them.
type Side int

const (
	// Right of the plots, level with the top of the first row's data.
	Right Side = iota
	// Below the plots, level with the left edge of the first column's data.
	Below
)

// gap is the space between the plots and their legend, and around the legend.
const gap = vg.Length(10) // points

// SaveFigure writes rows of plots, aligned, each cell w x h, with legend outside every plot's
// data (the plots' own legends are not drawn): to the right of the plots or below them. The
// picture grows by the legend's size, so no entry is cut off however long. The format is the
// path's extension's (.png or .svg).
func SaveFigure(path string, w, h vg.Length, rows [][]*plot.Plot, legend plot.Legend, side Side) error {
	if err := CheckFormat(path); err != nil {
		return err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return fmt.Errorf("plot %s: no plots to draw", path)
	}
	nRows, nCols := vg.Length(len(rows)), vg.Length(len(rows[0]))
	if legend.Padding == 0 {
		legend.Padding = vg.Points(3)
	}
	legend.Top, legend.Left = true, true
	size := legend.Rectangle(draw.Canvas{}).Size()
	gridW, gridH := nCols*w, nRows*h
	width, height := gridW, gridH
	switch side {
	case Right:
		if size.X > 0 {
			width += size.X + 2*gap
		}
		height = max(height, size.Y+2*gap)
	case Below:
		width = max(width, size.X+2*gap)
		if size.Y > 0 {
			height += size.Y + 2*gap
		}
	default:
		return fmt.Errorf("plot %s: no legend side %d", path, side)
	}

	c, err := draw.NewFormattedCanvas(width, height, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	dc := draw.New(c)
	grid := dc
	grid.Min.Y = grid.Max.Y - gridH
	if side == Right {
		grid.Max.X = grid.Min.X + gridW
	}
	canvases := plot.Align(rows, tiles(rows), grid)
	for r, row := range rows {
		for i, p := range row {
			own := p.Legend
			p.Legend = plot.NewLegend()
			p.Draw(canvases[r][i])
			p.Legend = own
		}
	}

	area := dc
	switch side {
	case Right:
		last := len(rows[0]) - 1
		area.Min.X = grid.Max.X + gap
		area.Max.Y = rows[0][last].DataCanvas(canvases[0][last]).Max.Y
		if area.Max.Y-size.Y < gap { // taller than the data: from the top of the picture
			area.Max.Y = dc.Max.Y - gap
		}
	case Below:
		area.Min.X = rows[0][0].DataCanvas(canvases[0][0]).Min.X
		if area.Min.X+size.X+gap > area.Max.X {
			area.Min.X = max(area.Max.X-size.X-gap, gap)
		}
		area.Max.Y = grid.Min.Y - gap
	}
	legend.Draw(area)
	return WriteCanvas(path, c)
}

// SaveGrid writes rows of plots, aligned, each cell w x h, each with its own legend, into one
// picture in the format of the path's extension (.png or .svg).
func SaveGrid(path string, w, h vg.Length, rows [][]*plot.Plot) error {
	if err := CheckFormat(path); err != nil {
		return err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return fmt.Errorf("plot %s: no plots to draw", path)
	}
	c, err := draw.NewFormattedCanvas(vg.Length(len(rows[0]))*w, vg.Length(len(rows))*h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	canvases := plot.Align(rows, tiles(rows), draw.New(c))
	for r, row := range rows {
		for i, p := range row {
			p.Draw(canvases[r][i])
		}
	}
	return WriteCanvas(path, c)
}

// tiles is the grid SaveFigure and SaveGrid align rows of plots in: room between the plots for
// their axes' labels.
func tiles(rows [][]*plot.Plot) draw.Tiles {
	return draw.Tiles{Rows: len(rows), Cols: len(rows[0]), PadX: vg.Points(20), PadY: vg.Points(15),
		PadTop: vg.Points(5), PadBottom: vg.Points(5), PadLeft: vg.Points(5), PadRight: vg.Points(10)}
}

// WriteCanvas writes a drawn canvas to path, leaving no partial file behind when it fails.
func WriteCanvas(path string, c io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return f.Close()
}

// SaveLegendOutside writes p at Width x Height with its legend outside the data (SaveFigure).
func SaveLegendOutside(p *plot.Plot, path string, side Side) error {
	return SaveFigure(path, Width, Height, [][]*plot.Plot{{p}}, p.Legend, side)
}
