package replay

import (
	"math"
	"strings"
	"testing"
	"time"
)

// docs/bursts.md's day table was measured on this trace: the generator must
// keep giving it for this seed.
func TestDefaultDayIsHeldToItsSeed(t *testing.T) {
	tr, err := GenerateDay(DefaultDayParams())
	if err != nil {
		t.Fatal(err)
	}
	const (
		wantFingerprint = "6bdded39386ee596"
		wantClaims      = 236
		wantBursts      = 16
		wantPeak        = 36
	)
	if got := tr.Fingerprint(); got != wantFingerprint || len(tr.Arrivals) != wantClaims || tr.Bursts() != wantBursts || tr.Peak() != wantPeak {
		t.Fatalf("seed %d now gives %d claims in %d bursts, peak %d, fingerprint %s; the published day is %d claims in %d bursts, peak %d, fingerprint %s",
			tr.Seed, len(tr.Arrivals), tr.Bursts(), tr.Peak(), got, wantClaims, wantBursts, wantPeak, wantFingerprint)
	}
}

func TestDaySameSeedSameTraceOtherSeedOtherTrace(t *testing.T) {
	p := DefaultDayParams()
	a, _ := GenerateDay(p)
	b, _ := GenerateDay(p)
	if a.Fingerprint() != b.Fingerprint() || len(a.Arrivals) != len(b.Arrivals) {
		t.Fatalf("one seed gave two days: %s and %s", a.Fingerprint(), b.Fingerprint())
	}
	p.Seed++
	c, _ := GenerateDay(p)
	if c.Fingerprint() == a.Fingerprint() {
		t.Fatalf("seeds %d and %d gave the same day", p.Seed-1, p.Seed)
	}
	// One BURSTS_SEED drives both traces, and they are not the same draw.
	bp := DefaultTraceParams()
	bp.Seed, bp.Duration = a.Seed, a.Duration
	bt, _ := GenerateTrace(bp)
	if bt.Fingerprint() == a.Fingerprint() {
		t.Fatal("the burst and day traces of one seed are the same arrivals")
	}
}

// The shape the docs promise, from the parameters alone: night at the trough
// at both ends, a single peak in the middle, rising before it and falling
// after it, symmetric.
func TestDayShapeHasATroughAndAPeak(t *testing.T) {
	p := DefaultDayParams()
	night := time.Duration(p.NightFraction / 2 * float64(p.Duration))
	if p.Shape(0) != 0 || p.Shape(night) != 0 || p.Shape(p.Duration-night) != 0 || p.Shape(p.Duration) != 0 {
		t.Fatal("the night is not at the trough")
	}
	if s := p.Shape(p.Duration / 2); math.Abs(s-1) > 1e-12 {
		t.Fatalf("shape %v at the middle, want the peak 1", s)
	}
	if p.ClaimRate(p.Duration/2) < 5*p.ClaimRate(0) {
		t.Fatalf("peak rate %.3f/s is not well above the trough's %.3f/s", p.ClaimRate(p.Duration/2), p.ClaimRate(0))
	}
	step := p.Duration / 200
	for d := night; d+step <= p.Duration/2; d += step {
		if p.Shape(d+step) < p.Shape(d) {
			t.Fatalf("the morning falls at %s", d)
		}
		if mirror := p.Duration - d; math.Abs(p.Shape(mirror)-p.Shape(d)) > 1e-9 {
			t.Fatalf("the day is not symmetric: %v at %s, %v at %s", p.Shape(d), d, p.Shape(mirror), mirror)
		}
	}
	// The slowest change: trough to peak takes many refill times (~21 s).
	if rise := p.Duration/2 - night; rise < 10*21*time.Second {
		t.Fatalf("the ramp takes %s: not slow compared with a refill", rise)
	}
}

// Every drawn day has the shape: arrivals sorted within the duration,
// lifetimes and bursts within bounds, the night quieter than the peak.
func TestDayTraceHasTheShapeItsParamsSay(t *testing.T) {
	p := DefaultDayParams()
	night := time.Duration(p.NightFraction / 2 * float64(p.Duration))
	for seed := uint64(1); seed <= 20; seed++ {
		p.Seed = seed
		tr, err := GenerateDay(p)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Name != TraceDay || tr.Duration != p.Duration || len(tr.Periods) != 4 ||
			tr.Periods[0].Phase != PhaseNight || tr.Periods[1].Phase != PhaseRising || tr.Periods[2].Phase != PhaseFalling || tr.Periods[3].Phase != PhaseNight ||
			tr.Periods[0].End != night || tr.Periods[3].End != p.Duration {
			t.Fatalf("seed %d: name %q, periods %+v", seed, tr.Name, tr.Periods)
		}
		bursts := map[int][]Arrival{}
		// Arrivals per window: each night at an end, and the peak's window of the same length.
		var nightN, peakN int
		for i, a := range tr.Arrivals {
			if i > 0 && a.At < tr.Arrivals[i-1].At {
				t.Fatalf("seed %d: arrivals out of order at %d", seed, i)
			}
			if a.At < 0 || a.At >= p.Duration {
				t.Fatalf("seed %d: arrival at %s outside [0, %s)", seed, a.At, p.Duration)
			}
			if a.Lifetime < p.LifetimeMin || a.Lifetime > p.LifetimeMax {
				t.Fatalf("seed %d: lifetime %s outside bounds", seed, a.Lifetime)
			}
			if a.Burst > 0 {
				bursts[a.Burst] = append(bursts[a.Burst], a)
			}
			switch {
			case a.At < night || a.At >= p.Duration-night:
				nightN++
			case a.At >= p.Duration/2-night && a.At < p.Duration/2+night:
				peakN++
			}
		}
		if peakN < 3*nightN {
			t.Fatalf("seed %d: %d claims around the peak, %d in the nights of the same total length: the trough is not lower than the peak", seed, peakN, nightN)
		}
		for n, claims := range bursts {
			if len(claims) > p.BurstMax || (len(claims) < p.BurstMin && claims[len(claims)-1].At+p.BurstSpread < p.Duration) {
				t.Fatalf("seed %d: burst %d has %d claims, want %d..%d", seed, n, len(claims), p.BurstMin, p.BurstMax)
			}
			if spread := claims[len(claims)-1].At - claims[0].At; spread > p.BurstSpread {
				t.Fatalf("seed %d: burst %d spreads over %s", seed, n, spread)
			}
		}
		if len(bursts) == 0 || len(bursts) == len(tr.Arrivals) {
			t.Fatalf("seed %d: %d bursts among %d claims: want bursts on top of single claims", seed, len(bursts), len(tr.Arrivals))
		}
	}
}

// The thinning draws the rate the params say: over many seeds the mean
// number of claims is the integral of the rate.
func TestDayDrawsItsExpectedNumberOfClaims(t *testing.T) {
	p := DefaultDayParams()
	want := p.ExpectedClaims()
	const seeds = 200
	total := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		p.Seed = seed
		tr, _ := GenerateDay(p)
		total += len(tr.Arrivals)
	}
	got := float64(total) / seeds
	// The count's sd is well under 2*sqrt(want)*3 (bursts of up to 6); its mean over 200 seeds within 2.5%.
	if math.Abs(got-want) > 0.025*want {
		t.Fatalf("mean claims per day %.1f over %d seeds, the rate integrates to %.1f", got, seeds, want)
	}
}

func TestBadDayParamsSayWhatIsWrong(t *testing.T) {
	p := DefaultDayParams()
	p.PeakGapMean = 2 * p.TroughGapMean // a peak quieter than the night
	p.NightFraction = 1
	p.BurstMin, p.BurstMax = 4, 3
	p.Duration = 0
	_, err := GenerateDay(p)
	if err == nil {
		t.Fatal("bad day parameters accepted")
	}
	for _, want := range []string{"Duration", "the peak must be busier than the trough", "NightFraction is 1", "burst size 4..3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Accept: the defaults, and a day with no night at all.
	q := DefaultDayParams()
	q.NightFraction = 0
	if _, err := GenerateDay(q); err != nil {
		t.Fatalf("a day without night refused: %v", err)
	}
}
