// Package replay is the warm pool's demand and its replay in simulated time: seeded arrival
// traces (this file, daytrace.go, loadday.go), and the model (model.go, nodes.go) that replays
// a trace against a pool sized by a policy, with the agent-sandbox controller's refill, the HPA's
// sync and Karpenter's nodes. It is a product package: the benchmark (e2e/bursts) holds it
// against the live runs, and what a team runs on its own history imports it without the harness.
package replay

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// ArrivalParams are what the burst trace (TraceParams) and the day trace (DayParams) share: the
// seed, the span, the bursts' size and spread, and the claims' lifetimes.
type ArrivalParams struct {
	Seed     uint64
	Duration time.Duration // arrivals happen in [0, Duration)

	// BurstMin..BurstMax claims per burst (uniform), all created within
	// BurstSpread of the burst's start.
	BurstMin, BurstMax int
	BurstSpread        time.Duration

	// Lifetimes are log-normal with this median and sigma, clipped to
	// [LifetimeMin, LifetimeMax]: most sessions are short, a few are long.
	LifetimeMedian           time.Duration
	LifetimeSigma            float64
	LifetimeMin, LifetimeMax time.Duration
}

// defaultArrivalParams are both traces' defaults, over the span each trace sets: the seed the
// measurements were made with, bursts of 2 to 6 within a second, sessions of about 30 s.
func defaultArrivalParams(duration time.Duration) ArrivalParams {
	return ArrivalParams{
		Seed:           20260513,
		Duration:       duration,
		BurstMin:       2,
		BurstMax:       6,
		BurstSpread:    time.Second,
		LifetimeMedian: 30 * time.Second,
		LifetimeSigma:  0.6,
		LifetimeMin:    15 * time.Second,
		LifetimeMax:    3 * time.Minute,
	}
}

// namedDuration is a duration parameter as a message names it.
type namedDuration struct {
	name string
	v    time.Duration
}

// problems is what is wrong with p, every problem at once. own are the trace's own durations,
// which must be greater than 0 like the shared ones; they are checked after Duration, so a
// trace's messages keep the order of its fields.
func (p ArrivalParams) problems(own ...namedDuration) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	durations := append(append([]namedDuration{{"Duration", p.Duration}}, own...),
		namedDuration{"BurstSpread", p.BurstSpread}, namedDuration{"LifetimeMedian", p.LifetimeMedian},
		namedDuration{"LifetimeMin", p.LifetimeMin}, namedDuration{"LifetimeMax", p.LifetimeMax})
	for _, d := range durations {
		if d.v <= 0 {
			add("%s is %s; it must be greater than 0", d.name, d.v)
		}
	}
	if p.BurstMin < 1 || p.BurstMax < p.BurstMin {
		add("burst size %d..%d; it needs 1 <= BurstMin <= BurstMax", p.BurstMin, p.BurstMax)
	}
	if p.LifetimeMin > p.LifetimeMax || p.LifetimeMedian < p.LifetimeMin || p.LifetimeMedian > p.LifetimeMax {
		add("lifetimes: median %s must lie in [LifetimeMin %s, LifetimeMax %s]", p.LifetimeMedian, p.LifetimeMin, p.LifetimeMax)
	}
	if p.LifetimeSigma < 0 || math.IsNaN(p.LifetimeSigma) || math.IsInf(p.LifetimeSigma, 0) {
		add("LifetimeSigma is %v; it must be a finite number >= 0", p.LifetimeSigma)
	}
	return errs
}

// paramsError is the error of a trace's parameters, named what, with every problem; nil without.
func paramsError(what string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.New(what + ": " + strings.Join(errs, "; "))
}

// lifetime draws a claim's lifetime: log-normal, clipped, to the millisecond.
func (p ArrivalParams) lifetime(rng *rand.Rand) time.Duration {
	d := time.Duration(float64(p.LifetimeMedian) * math.Exp(p.LifetimeSigma*rng.NormFloat64()))
	return min(max(d, p.LifetimeMin), p.LifetimeMax).Round(time.Millisecond)
}

// burstArrivals draws the claims of burst number, opening at at: BurstMin..largest of them
// (uniform), the first at at, the rest within BurstSpread of it. A claim past the trace's end is
// dropped before its lifetime is drawn, as the traces always have (the seed's draws stay put).
func (p ArrivalParams) burstArrivals(rng *rand.Rand, at time.Duration, number, largest int) []Arrival {
	var out []Arrival
	n := p.BurstMin + rng.IntN(largest-p.BurstMin+1)
	for i := 0; i < n; i++ {
		offset := time.Duration(0)
		if i > 0 {
			offset = time.Duration(rng.Int64N(int64(p.BurstSpread)))
		}
		if a := (at + offset).Round(time.Millisecond); a < p.Duration {
			out = append(out, Arrival{At: a, Lifetime: p.lifetime(rng), Burst: number})
		}
	}
	return out
}

// TraceParams describe a Markov-modulated arrival process: quiet periods
// with sporadic single claims alternate with busy periods in which claims
// come in bursts, several within a second. Every claim lives for a drawn
// lifetime. The same params (seed included) always give the same trace.
type TraceParams struct {
	ArrivalParams

	QuietMean time.Duration // mean length of a quiet period (exponential)
	BusyMean  time.Duration // mean length of a busy period (exponential)
	// QuietGapMean is the mean gap between single claims in a quiet period
	// (Poisson arrivals).
	QuietGapMean time.Duration
	// BurstGapMean is the mean gap between bursts in a busy period.
	BurstGapMean time.Duration
}

// DefaultTraceParams is the trace the README's table was measured on.
func DefaultTraceParams() TraceParams {
	return TraceParams{
		ArrivalParams: defaultArrivalParams(15 * time.Minute),
		QuietMean:     100 * time.Second,
		BusyMean:      80 * time.Second,
		QuietGapMean:  60 * time.Second,
		BurstGapMean:  10 * time.Second,
	}
}

// Validate says what is wrong with p, every problem at once.
func (p TraceParams) Validate() error {
	return paramsError("trace parameters", p.problems(
		namedDuration{"QuietMean", p.QuietMean}, namedDuration{"BusyMean", p.BusyMean},
		namedDuration{"QuietGapMean", p.QuietGapMean}, namedDuration{"BurstGapMean", p.BurstGapMean}))
}

// Arrival is one claim of the trace: created At after the trace starts,
// deleted Lifetime after it was created.
type Arrival struct {
	At       time.Duration
	Lifetime time.Duration
	// Burst numbers the burst the claim belongs to (from 1); 0 for a single
	// claim of a quiet period.
	Burst int
}

// Period is one regime of the trace: for the burst trace a quiet or a busy
// period; for the day trace a phase of the day (night, rising, falling; the
// day's two are Busy).
type Period struct {
	Busy       bool
	Phase      string
	Start, End time.Duration
}

// The benchmark's two traces, by name.
const (
	TraceBurst = "burst" // quiet and busy periods of a few minutes (TraceParams)
	TraceDay   = "day"   // a compressed day: trough, peak, trough, with bursts (DayParams)
	// TraceLoadDay is the day whose bursts grow with the load (loadday.go), not one of the
	// live benchmark's traces: the model's third family.
	TraceLoadDay = "loadday"
)

// Trace is a generated arrival trace, sorted by At.
type Trace struct {
	Name string
	Seed uint64
	// Start is the clock time of the trace's time 0 (a history's day: its midnight); zero for
	// a drawn trace, whose clock is its own.
	Start    time.Time
	Duration time.Duration
	// Params are the TraceParams or DayParams the trace was drawn from.
	Params   any
	Arrivals []Arrival
	Periods  []Period
}

// Clock is the clock time of at in the trace; zero when the trace has no Start.
func (tr *Trace) Clock(at time.Duration) time.Time {
	if tr.Start.IsZero() {
		return time.Time{}
	}
	return tr.Start.Add(at)
}

// GenerateTrace draws the trace p describes. It starts with a quiet period,
// so every pool begins at rest.
func GenerateTrace(p TraceParams) (*Trace, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// PCG with the seed in both words: a fixed, documented generator, so a
	// seed names the same trace on every Go version (math/rand/v2 promises it).
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))
	exp := func(mean time.Duration) time.Duration {
		return time.Duration(rng.ExpFloat64() * float64(mean))
	}
	t := &Trace{Name: TraceBurst, Seed: p.Seed, Duration: p.Duration, Params: p}
	burst := 0
	busy := false
	for start := time.Duration(0); start < p.Duration; busy = !busy {
		mean := p.QuietMean
		if busy {
			mean = p.BusyMean
		}
		end := min(start+exp(mean), p.Duration)
		phase := "quiet"
		if busy {
			phase = "busy"
		}
		t.Periods = append(t.Periods, Period{Busy: busy, Phase: phase, Start: start, End: end})
		if busy {
			for at := start + exp(p.BurstGapMean); at < end; at += exp(p.BurstGapMean) {
				burst++
				t.Arrivals = append(t.Arrivals, p.burstArrivals(rng, at, burst, p.BurstMax)...)
			}
		} else {
			for at := start + exp(p.QuietGapMean); at < end; at += exp(p.QuietGapMean) {
				t.Arrivals = append(t.Arrivals, Arrival{At: at.Round(time.Millisecond), Lifetime: p.lifetime(rng)})
			}
		}
		start = end
	}
	sort.SliceStable(t.Arrivals, func(i, j int) bool { return t.Arrivals[i].At < t.Arrivals[j].At })
	return t, nil
}

// Fingerprint is a short hash of every arrival (time, lifetime, burst): two
// traces with the same fingerprint replay the same demand.
func (t *Trace) Fingerprint() string {
	h := sha256.New()
	var b [24]byte
	for _, a := range t.Arrivals {
		binary.BigEndian.PutUint64(b[0:], uint64(a.At))
		binary.BigEndian.PutUint64(b[8:], uint64(a.Lifetime))
		binary.BigEndian.PutUint64(b[16:], uint64(a.Burst))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Bursts is the number of bursts in the trace.
func (t *Trace) Bursts() int {
	n := 0
	for _, a := range t.Arrivals {
		n = max(n, a.Burst)
	}
	return n
}

// End is when the last claim of the trace is deleted.
func (t *Trace) End() time.Duration {
	var end time.Duration
	for _, a := range t.Arrivals {
		end = max(end, a.At+a.Lifetime)
	}
	return end
}

// ActiveAt is the number of claims alive at d (created at or before d, not
// yet deleted).
func (t *Trace) ActiveAt(d time.Duration) int {
	n := 0
	for _, a := range t.Arrivals {
		if a.At <= d && d < a.At+a.Lifetime {
			n++
		}
	}
	return n
}

// Peak is the largest number of claims alive at once: ActiveAt's largest value at a creation,
// found in one sweep over the creations and the sorted deletions.
func (t *Trace) Peak() int {
	ends := make([]time.Duration, len(t.Arrivals))
	for i, a := range t.Arrivals {
		ends[i] = a.At + a.Lifetime
	}
	slices.Sort(ends)
	peak, started, ended := 0, 0, 0
	for _, a := range t.Arrivals {
		for started < len(t.Arrivals) && t.Arrivals[started].At <= a.At {
			started++
		}
		for ended < len(ends) && ends[ended] <= a.At {
			ended++
		}
		peak = max(peak, started-ended)
	}
	return peak
}

// Summary is one line describing the trace for the report.
func (t *Trace) Summary() string {
	var busy time.Duration
	for _, p := range t.Periods {
		if p.Busy {
			busy += p.End - p.Start
		}
	}
	var life time.Duration
	for _, a := range t.Arrivals {
		life += a.Lifetime
	}
	mean := time.Duration(0)
	if len(t.Arrivals) > 0 {
		mean = life / time.Duration(len(t.Arrivals))
	}
	what := "busy"
	if t.Name == TraceDay || t.Name == TraceLoadDay {
		what = "day (not night)"
	}
	return fmt.Sprintf("%s trace, seed %d, %s, %d claims (%d in %d bursts, %d single), %s %s of %s, mean lifetime %s, peak %d concurrent claims, fingerprint %s",
		t.Name, t.Seed, t.Duration, len(t.Arrivals), len(t.Arrivals)-t.singles(), t.Bursts(), t.singles(),
		what, busy.Round(time.Second), t.Duration, mean.Round(100*time.Millisecond), t.Peak(), t.Fingerprint())
}

func (t *Trace) singles() int {
	n := 0
	for _, a := range t.Arrivals {
		if a.Burst == 0 {
			n++
		}
	}
	return n
}
