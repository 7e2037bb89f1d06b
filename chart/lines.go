package chart

import (
	"errors"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Dashes is the dash pattern of a line drawn for reference (the target, a fixed pool's cost):
// a new slice each call, so a plot that changes its own cannot change another's.
func Dashes() []vg.Length { return []vg.Length{vg.Points(4), vg.Points(3)} }

// TargetLine is the warm-hit target at y across xMin..xMax: dashed, in Target's colour.
func TargetLine(y, xMin, xMax float64) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: xMin, Y: y}, {X: xMax, Y: y}})
	if err != nil {
		return nil, err
	}
	l.Color, l.Dashes = Target, Dashes()
	return l, nil
}

// Steps is a series of values that hold until the next (the claims held, a pool's replicas) as
// a line: each point's value drawn flat to the next point, the last held to end.
func Steps(xys plotter.XYs, end float64, c color.Color, width vg.Length) (*plotter.Line, error) {
	if len(xys) == 0 {
		return nil, errors.New("steps: no points")
	}
	held := append(xys[:len(xys):len(xys)], plotter.XY{X: end, Y: xys[len(xys)-1].Y})
	l, err := plotter.NewLine(held)
	if err != nil {
		return nil, err
	}
	l.StepStyle, l.Color, l.Width = plotter.PostStep, c, width
	return l, nil
}
