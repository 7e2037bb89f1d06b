package replay

import (
	"math"
	"testing"
	"time"
)

// docs/bursts.md's load-day figures were drawn on these seeds: the generator must keep giving
// them.
func TestDefaultLoadDayIsHeldToItsSeed(t *testing.T) {
	tr, err := GenerateLoadDay(DefaultLoadDayParams())
	if err != nil {
		t.Fatal(err)
	}
	const (
		wantFingerprint = "5ad552fc5a3cb700"
		wantClaims      = 196
		wantBursts      = 14
		wantPeak        = 32
	)
	if got := tr.Fingerprint(); got != wantFingerprint || len(tr.Arrivals) != wantClaims || tr.Bursts() != wantBursts || tr.Peak() != wantPeak {
		t.Fatalf("seed %d now gives %d claims in %d bursts, peak %d, fingerprint %s; the published load day is %d claims in %d bursts, peak %d, fingerprint %s",
			tr.Seed, len(tr.Arrivals), tr.Bursts(), tr.Peak(), got, wantClaims, wantBursts, wantPeak, wantFingerprint)
	}
	if tr.Name != TraceLoadDay {
		t.Fatalf("named %q", tr.Name)
	}
	day, _ := GenerateDay(DefaultDayParams())
	if day.Fingerprint() == tr.Fingerprint() {
		t.Fatal("the load day of a seed is its day trace")
	}
}

// Bursts are 2 at night and grow with the day to at most 10 at the peak, and over many seeds
// the peak's bursts do reach 10; the count of claims follows the rate the params integrate to.
func TestLoadDayBurstsGrowWithTheLoad(t *testing.T) {
	p := DefaultLoadDayParams()
	night := time.Duration(p.NightFraction / 2 * float64(p.Duration))
	largest, total := 0, 0
	const seeds = 200
	for seed := uint64(1); seed <= seeds; seed++ {
		p.Seed = seed
		tr, err := GenerateLoadDay(p)
		if err != nil {
			t.Fatal(err)
		}
		total += len(tr.Arrivals)
		bursts := map[int][]Arrival{}
		for _, a := range tr.Arrivals {
			if a.Burst > 0 {
				bursts[a.Burst] = append(bursts[a.Burst], a)
			}
		}
		for n, claims := range bursts {
			at := claims[0].At
			cut := claims[len(claims)-1].At+p.BurstSpread >= p.Duration
			if len(claims) > p.BurstMaxAt(at) || (len(claims) < p.BurstMin && !cut) {
				t.Fatalf("seed %d: burst %d at %s has %d claims, want %d..%d", seed, n, at, len(claims), p.BurstMin, p.BurstMaxAt(at))
			}
			if (at < night || at >= p.Duration-night) && len(claims) != 2 && !cut {
				t.Fatalf("seed %d: a night burst at %s of %d claims, want 2", seed, at, len(claims))
			}
			largest = max(largest, len(claims))
		}
	}
	if largest != p.PeakBurstMax {
		t.Fatalf("largest burst over %d seeds is %d, want the peak's %d", seeds, largest, p.PeakBurstMax)
	}
	if p.BurstMaxAt(0) != 2 || p.BurstMaxAt(p.Duration/2) != 10 {
		t.Fatalf("burst maximum %d at night, %d at the peak; want 2 and 10", p.BurstMaxAt(0), p.BurstMaxAt(p.Duration/2))
	}
	want := p.ExpectedClaims()
	if got := float64(total) / seeds; math.Abs(got-want) > 0.025*want {
		t.Fatalf("mean claims per load day %.1f over %d seeds, the rate integrates to %.1f", got, seeds, want)
	}
	p.PeakBurstMax = 1
	if _, err := GenerateLoadDay(p); err == nil {
		t.Fatal("a peak burst maximum below the night's accepted")
	}
}
