package advisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// BenchmarkAdvise times the advice on real-length days: the load-scaled day stretched from 20
// minutes to 24 hours (its gaps 72 times longer, so the same claims per day), ADVISE_BENCH_DAYS
// of them (default 3).
//
//	go test -run '^$' -bench '^BenchmarkAdvise$' -benchtime 1x ./advise/advisor
func BenchmarkAdvise(b *testing.B) {
	days := uint64(3)
	if v := os.Getenv("ADVISE_BENCH_DAYS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			b.Fatalf("ADVISE_BENCH_DAYS=%q: want a whole number of days, 1 or more", v)
		}
		days = n
	}
	var trs []*replay.Trace
	for s := uint64(1); s <= days; s++ {
		p := replay.DefaultLoadDayParams()
		p.Seed, p.Duration = s, 24*time.Hour
		p.TroughGapMean, p.PeakGapMean = 72*p.TroughGapMean, 72*p.PeakGapMean
		p.TroughBurstGapMean, p.PeakBurstGapMean = 72*p.TroughBurstGapMean, 72*p.PeakBurstGapMean
		tr, err := replay.GenerateLoadDay(p)
		if err != nil {
			b.Fatal(err)
		}
		trs = append(trs, tr)
	}
	var sb strings.Builder
	sb.WriteString("pool,claim,created,deleted\n")
	claims := 0
	for i, tr := range trs {
		for j, a := range tr.Arrivals {
			start := epoch.Add(time.Duration(i)*24*time.Hour + a.At)
			fmt.Fprintf(&sb, "code,c-%d-%d,%s,%s\n", i, j, start.Format(time.RFC3339Nano), start.Add(a.Lifetime).Format(time.RFC3339Nano))
			claims++
		}
	}
	h, err := history.Read(strings.NewReader(sb.String()), "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		advice, err := Advise(h, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%d days, %d claims, %d settings: %s (%s)\n", days, claims, len(advice[0].Outcomes), time.Since(start).Round(time.Millisecond), advice[0].Verdict)
	}
}

// BenchmarkAdviseLarge advises, in this process, a history of ADVISE_BENCH_DAYS days (default 14)
// of ADVISE_BENCH_PER_DAY claims each (default 7143: 100,000 in all), read from its file: for a
// profile (-cpuprofile) of a platform's scale.
//
//	ADVISE_BENCH_PER_DAY=71429 go test -run '^$' -bench '^BenchmarkAdviseLarge$' -benchtime 1x -cpuprofile cpu.out ./advise/advisor
func BenchmarkAdviseLarge(b *testing.B) {
	days, perDay := envInt(b, "ADVISE_BENCH_DAYS", 14), envInt(b, "ADVISE_BENCH_PER_DAY", 7143)
	path := filepath.Join(b.TempDir(), "history.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	claims, err := writeScaleHistory(f, days, perDay, 1)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		h, err := readFile(path, history.DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		read := time.Since(start)
		advice, err := Advise(h, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%d days, %d claims: read %s, advised %s (%s)\n", days, claims, read.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), advice[0].Verdict)
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a whole number, 1 or more", name, v)
	}
	return n
}
