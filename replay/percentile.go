package replay

import (
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds: the claim waits the
// model and the benchmarks report.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
