package main

import (
	"fmt"
	"io"

	"github.com/warmpool/warm-pool-autoscaling-keda/verify/report"
)

// The report's types live in verify/report so the end-to-end test can decode --json into them;
// verify's code names them as before.
type (
	Report        = report.Report
	Check         = report.Check
	Step          = report.Step
	ControlWindow = report.ControlWindow
	Status        = report.Status
)

const (
	Pass = report.Pass
	Fail = report.Fail
	Skip = report.Skip
	NA   = report.NA
)

func newReport(out io.Writer) *Report { return report.New(out) }

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func secs(v float64) string  { return fmt.Sprintf("%.3fs", v) }
