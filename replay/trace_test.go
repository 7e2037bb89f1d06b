package replay

import (
	"strings"
	"testing"
	"time"
)

// The README's table was measured on this trace: the generator must keep
// giving it for this seed, or the table no longer describes what the
// benchmark replays.
func TestDefaultTraceIsHeldToItsSeed(t *testing.T) {
	tr, err := GenerateTrace(DefaultTraceParams())
	if err != nil {
		t.Fatal(err)
	}
	const (
		wantFingerprint = "52fb0ee57aa14ed3"
		wantClaims      = 202
		wantBursts      = 48
	)
	if got := tr.Fingerprint(); got != wantFingerprint || len(tr.Arrivals) != wantClaims || tr.Bursts() != wantBursts {
		t.Fatalf("seed %d now gives %d claims in %d bursts, fingerprint %s; the README's trace is %d claims in %d bursts, fingerprint %s",
			tr.Seed, len(tr.Arrivals), tr.Bursts(), got, wantClaims, wantBursts, wantFingerprint)
	}
	first := tr.Arrivals[0]
	if first.At != 37947*time.Millisecond || first.Lifetime != 100628*time.Millisecond {
		t.Errorf("first arrival %+v, want at 37.947s living 1m40.628s", first)
	}
}

func TestSameSeedSameTraceOtherSeedOtherTrace(t *testing.T) {
	p := DefaultTraceParams()
	a, _ := GenerateTrace(p)
	b, _ := GenerateTrace(p)
	if a.Fingerprint() != b.Fingerprint() || len(a.Arrivals) != len(b.Arrivals) {
		t.Fatalf("one seed gave two traces: %s and %s", a.Fingerprint(), b.Fingerprint())
	}
	p.Seed++
	c, _ := GenerateTrace(p)
	if c.Fingerprint() == a.Fingerprint() {
		t.Fatalf("seeds %d and %d gave the same trace", p.Seed-1, p.Seed)
	}
}

// The trace has the shape the benchmark promises: quiet periods first and
// between busy ones, bursts of BurstMin..BurstMax claims within BurstSpread,
// lifetimes within bounds, arrivals sorted inside the duration.
func TestTraceHasTheShapeItsParamsSay(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		p := DefaultTraceParams()
		p.Seed = seed
		tr, err := GenerateTrace(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Periods) == 0 || tr.Periods[0].Busy || tr.Periods[0].Start != 0 {
			t.Fatalf("seed %d: the trace must open with a quiet period: %+v", seed, tr.Periods)
		}
		for i := 1; i < len(tr.Periods); i++ {
			if tr.Periods[i].Busy == tr.Periods[i-1].Busy || tr.Periods[i].Start != tr.Periods[i-1].End {
				t.Fatalf("seed %d: periods do not alternate back to back: %+v", seed, tr.Periods)
			}
		}
		if last := tr.Periods[len(tr.Periods)-1]; last.End != p.Duration {
			t.Fatalf("seed %d: periods end at %s, not at the duration %s", seed, last.End, p.Duration)
		}
		bursts := map[int][]Arrival{}
		for i, a := range tr.Arrivals {
			if i > 0 && a.At < tr.Arrivals[i-1].At {
				t.Fatalf("seed %d: arrivals out of order at %d", seed, i)
			}
			if a.At < 0 || a.At >= p.Duration {
				t.Fatalf("seed %d: arrival at %s outside [0, %s)", seed, a.At, p.Duration)
			}
			if a.Lifetime < p.LifetimeMin || a.Lifetime > p.LifetimeMax {
				t.Fatalf("seed %d: lifetime %s outside [%s, %s]", seed, a.Lifetime, p.LifetimeMin, p.LifetimeMax)
			}
			if a.Burst == 0 && periodAt(tr, a.At).Busy {
				t.Fatalf("seed %d: single claim %+v in a busy period", seed, a)
			}
			if a.Burst > 0 {
				bursts[a.Burst] = append(bursts[a.Burst], a)
			}
		}
		for n, claims := range bursts {
			// A burst opens in a busy period (its last claims may spill past its end).
			if !periodAt(tr, claims[0].At).Busy {
				t.Fatalf("seed %d: burst %d opens at %s, in a quiet period", seed, n, claims[0].At)
			}
			// A burst cut by the end of the trace may be smaller.
			if len(claims) > p.BurstMax || (len(claims) < p.BurstMin && claims[len(claims)-1].At+p.BurstSpread < p.Duration) {
				t.Fatalf("seed %d: burst %d has %d claims, want %d..%d", seed, n, len(claims), p.BurstMin, p.BurstMax)
			}
			if spread := claims[len(claims)-1].At - claims[0].At; spread > p.BurstSpread {
				t.Fatalf("seed %d: burst %d spreads over %s, more than %s", seed, n, spread, p.BurstSpread)
			}
		}
	}
}

func periodAt(tr *Trace, d time.Duration) Period {
	for _, p := range tr.Periods {
		if p.Start <= d && d < p.End {
			return p
		}
	}
	return Period{}
}

func TestBadTraceParamsSayWhatIsWrong(t *testing.T) {
	p := DefaultTraceParams()
	p.BurstMin, p.BurstMax = 5, 2
	p.Duration = 0
	p.LifetimeMedian = time.Hour
	_, err := GenerateTrace(p)
	if err == nil {
		t.Fatal("bad parameters accepted")
	}
	for _, want := range []string{"Duration", "burst size 5..2", "median 1h0m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestActiveAtCountsLiveClaims(t *testing.T) {
	tr := &Trace{Arrivals: []Arrival{{At: 0, Lifetime: 10 * time.Second}, {At: 5 * time.Second, Lifetime: 10 * time.Second}}}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{0, 1}, {5 * time.Second, 2}, {10 * time.Second, 1}, {15 * time.Second, 0}} {
		if got := tr.ActiveAt(c.at); got != c.want {
			t.Errorf("ActiveAt(%s) = %d, want %d", c.at, got, c.want)
		}
	}
	if tr.End() != 15*time.Second {
		t.Errorf("End() = %s, want 15s", tr.End())
	}
}
