package replay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// DayParams describe a compressed day: a night at a trough rate, a smooth
// ramp up to a peak in the middle of the day and back down, another night.
// Single claims and bursts both arrive as non-homogeneous Poisson processes
// whose rates follow the day's shape, so bursts sit on top of a demand that
// moves slowly compared with a pool's refill time. The same params (seed
// included) always give the same trace.
type DayParams struct {
	ArrivalParams

	// NightFraction of the duration is night (the trough), half of it at
	// each end; the day between rises and falls as a raised cosine, peaking
	// at the middle of the trace.
	NightFraction float64

	// Single claims: mean gap at the trough (night) and at the peak.
	TroughGapMean, PeakGapMean time.Duration
	// Bursts: mean gap between bursts at the trough and at the peak.
	TroughBurstGapMean, PeakBurstGapMean time.Duration
	// PeakBurstMax > 0 makes the burst size grow with the day: a burst's
	// maximum is BurstMax at the trough and rises with Shape to PeakBurstMax
	// at the peak (the load-scaled day, loadday.go); 0 keeps BurstMax all day.
	PeakBurstMax int
}

// DefaultDayParams is the day trace docs/bursts.md was measured on: 20
// minutes (the benchmark's two traces then fit in about 45 minutes of wall
// time), half of it night, as half of a working day's 24 hours are quiet. At
// night a claim every 90 s and a burst every 5 minutes; at the peak a claim
// every 2 s and a burst every 30 s, about 25 times the night's rate. The
// rise from trough to peak takes 5 minutes, some 14 refill times of ~21 s (a
// boot, a KEDA poll and an HPA sync): demand that moves slowly, which an
// autoscaler can follow where a fixed pool must be sized for the peak all day.
func DefaultDayParams() DayParams {
	return DayParams{
		ArrivalParams:      defaultArrivalParams(20 * time.Minute),
		NightFraction:      0.5,
		TroughGapMean:      90 * time.Second,
		PeakGapMean:        2 * time.Second,
		TroughBurstGapMean: 5 * time.Minute,
		PeakBurstGapMean:   30 * time.Second,
	}
}

// Validate says what is wrong with p, every problem at once: the shared parameters', then the
// day's own.
func (p DayParams) Validate() error {
	errs := p.problems(namedDuration{"TroughGapMean", p.TroughGapMean}, namedDuration{"PeakGapMean", p.PeakGapMean},
		namedDuration{"TroughBurstGapMean", p.TroughBurstGapMean}, namedDuration{"PeakBurstGapMean", p.PeakBurstGapMean})
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if !(p.NightFraction >= 0 && p.NightFraction < 1) {
		add("NightFraction is %v; it must lie in [0, 1) (some of the day must be day)", p.NightFraction)
	}
	// A day whose peak is no busier than its night has no shape to follow.
	if p.PeakGapMean > 0 && p.TroughGapMean > 0 && p.PeakGapMean >= p.TroughGapMean {
		add("PeakGapMean %s is not shorter than TroughGapMean %s: the peak must be busier than the trough", p.PeakGapMean, p.TroughGapMean)
	}
	if p.PeakBurstGapMean > 0 && p.TroughBurstGapMean > 0 && p.PeakBurstGapMean > p.TroughBurstGapMean {
		add("PeakBurstGapMean %s is longer than TroughBurstGapMean %s: bursts must not be rarer at the peak than at the trough", p.PeakBurstGapMean, p.TroughBurstGapMean)
	}
	if p.PeakBurstMax != 0 && p.PeakBurstMax < p.BurstMax {
		add("PeakBurstMax %d is below BurstMax %d: bursts must not shrink at the peak (0: BurstMax all day)", p.PeakBurstMax, p.BurstMax)
	}
	return paramsError("day trace parameters", errs)
}

// Shape is the day's level at d, from 0 (night, the trough) to 1 (the peak,
// at the middle of the trace): 0 through the first and last NightFraction/2
// of the duration, a raised cosine between.
func (p DayParams) Shape(d time.Duration) float64 {
	night := p.NightFraction / 2 * float64(p.Duration)
	dayLen := float64(p.Duration) - 2*night
	u := (float64(d) - night) / dayLen
	if u <= 0 || u >= 1 {
		return 0
	}
	return (1 - math.Cos(2*math.Pi*u)) / 2
}

// SingleRate and BurstRate are the arrival rates (per second) of single
// claims and of bursts at d: the trough's rate plus Shape(d) of the way to
// the peak's.
func (p DayParams) SingleRate(d time.Duration) float64 {
	return between(1/p.TroughGapMean.Seconds(), 1/p.PeakGapMean.Seconds(), p.Shape(d))
}

// BurstRate: see SingleRate.
func (p DayParams) BurstRate(d time.Duration) float64 {
	return between(1/p.TroughBurstGapMean.Seconds(), 1/p.PeakBurstGapMean.Seconds(), p.Shape(d))
}

// BurstMaxAt is the largest burst at d: BurstMax, or with PeakBurstMax set,
// BurstMax at the trough rising with Shape(d) to PeakBurstMax at the peak.
func (p DayParams) BurstMaxAt(d time.Duration) int {
	if p.PeakBurstMax == 0 {
		return p.BurstMax
	}
	return p.BurstMax + int(math.Round(p.Shape(d)*float64(p.PeakBurstMax-p.BurstMax)))
}

// ClaimRate is the expected claims per second at d: singles plus bursts
// times their mean size.
func (p DayParams) ClaimRate(d time.Duration) float64 {
	return p.SingleRate(d) + p.BurstRate(d)*float64(p.BurstMin+p.BurstMaxAt(d))/2
}

// ExpectedClaims integrates ClaimRate over the trace (a claim of a burst cut
// by the end of the trace still counts).
func (p DayParams) ExpectedClaims() float64 {
	const steps = 10000
	dt := p.Duration / steps
	sum := 0.0
	for i := 0; i < steps; i++ {
		sum += p.ClaimRate(dt*time.Duration(i)+dt/2) * dt.Seconds()
	}
	return sum
}

func between(lo, hi, f float64) float64 { return lo + f*(hi-lo) }

// Day phases, as Period.Phase.
const (
	PhaseNight   = "night"
	PhaseRising  = "rising"
	PhaseFalling = "falling"
)

// GenerateDay draws the day trace p describes. Singles and bursts are each a
// non-homogeneous Poisson process drawn by thinning (Lewis and Shedler):
// candidates at the peak rate, each kept with probability rate(t)/peak.
func GenerateDay(p DayParams) (*Trace, error) {
	// A stream of its own (the second word differs from the burst trace's),
	// so BURSTS_SEED=N gives two unrelated traces.
	return generateDay(p, TraceDay, 0x5851f42d4c957f2d)
}

// generateDay draws a day named name from the stream whose second word is
// the seed xor stream.
func generateDay(p DayParams, name string, stream uint64) (*Trace, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed^stream))
	t := &Trace{Name: name, Seed: p.Seed, Duration: p.Duration, Params: p}
	// Draw in one pass over time, both processes interleaved through their
	// own candidate clocks, so every random number's use is fixed by the seed.
	singleMax, burstMax := 1/p.PeakGapMean.Seconds(), 1/min(p.PeakBurstGapMean, p.TroughBurstGapMean).Seconds()
	next := func(at time.Duration, rate float64) time.Duration {
		return at + time.Duration(rng.ExpFloat64()/rate*float64(time.Second))
	}
	nextSingle, nextBurst := next(0, singleMax), next(0, burstMax)
	burst := 0
	for nextSingle < p.Duration || nextBurst < p.Duration {
		if nextSingle <= nextBurst {
			at := nextSingle
			if rng.Float64()*singleMax < p.SingleRate(at) {
				t.Arrivals = append(t.Arrivals, Arrival{At: at.Round(time.Millisecond), Lifetime: p.lifetime(rng)})
			}
			nextSingle = next(at, singleMax)
			continue
		}
		at := nextBurst
		if rng.Float64()*burstMax < p.BurstRate(at) {
			burst++
			t.Arrivals = append(t.Arrivals, p.burstArrivals(rng, at, burst, p.BurstMaxAt(at))...)
		}
		nextBurst = next(at, burstMax)
	}
	// Arrivals rounded to the millisecond can land on Duration; keep [0, Duration).
	kept := t.Arrivals[:0]
	for _, a := range t.Arrivals {
		if a.At < p.Duration {
			kept = append(kept, a)
		}
	}
	t.Arrivals = kept
	sort.SliceStable(t.Arrivals, func(i, j int) bool { return t.Arrivals[i].At < t.Arrivals[j].At })
	night := time.Duration(p.NightFraction / 2 * float64(p.Duration))
	mid := p.Duration / 2
	for _, ph := range []Period{
		{Phase: PhaseNight, Start: 0, End: night},
		{Phase: PhaseRising, Busy: true, Start: night, End: mid},
		{Phase: PhaseFalling, Busy: true, Start: mid, End: p.Duration - night},
		{Phase: PhaseNight, Start: p.Duration - night, End: p.Duration},
	} {
		if ph.End > ph.Start {
			t.Periods = append(t.Periods, ph)
		}
	}
	return t, nil
}
