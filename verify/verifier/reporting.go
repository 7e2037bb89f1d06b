package verifier

import (
	"fmt"
	"io"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

func newReport(out io.Writer) *report.Report { return report.New(out) }

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func secs(v float64) string  { return fmt.Sprintf("%.3fs", v) }
