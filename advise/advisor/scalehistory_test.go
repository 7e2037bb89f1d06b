package advisor

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// writeScaleHistory writes days load-scaled days of 24 h (the benchmark's shape, its gaps
// shortened so a day holds about perDay claims, lifetimes as they are) as a history file: what a
// platform larger than the benchmark's exports. Seeds seed..seed+days-1.
func writeScaleHistory(w io.Writer, days, perDay int, seed uint64) (claims int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.WriteString("pool,claim,created,deleted\n"); err != nil {
		return 0, err
	}
	for i := range days {
		p := replay.DefaultLoadDayParams()
		p.Seed, p.Duration = seed+uint64(i), 24*time.Hour
		const stretch = 72 // 20 minutes to 24 hours
		p.TroughGapMean, p.PeakGapMean = stretch*p.TroughGapMean, stretch*p.PeakGapMean
		p.TroughBurstGapMean, p.PeakBurstGapMean = stretch*p.TroughBurstGapMean, stretch*p.PeakBurstGapMean
		f := p.ExpectedClaims() / float64(perDay)
		scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
		p.TroughGapMean, p.PeakGapMean = scale(p.TroughGapMean), scale(p.PeakGapMean)
		p.TroughBurstGapMean, p.PeakBurstGapMean = scale(p.TroughBurstGapMean), scale(p.PeakBurstGapMean)
		tr, err := replay.GenerateLoadDay(p)
		if err != nil {
			return 0, err
		}
		day := epoch.Add(time.Duration(i) * 24 * time.Hour)
		for j, a := range tr.Arrivals {
			start := day.Add(a.At)
			fmt.Fprintf(bw, "code,c-%d-%d,%s,%s\n", i, j, start.Format(time.RFC3339Nano), start.Add(a.Lifetime).Format(time.RFC3339Nano))
			claims++
		}
	}
	return claims, bw.Flush()
}
