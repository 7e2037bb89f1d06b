package framework

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// The fault judge reads the watch's record: the value in force when the part went down, then
// every change; one value under the held claims' size is a spurious scale-down.
func TestFaultJudgeCountsEveryValueBelowTheHeldSize(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := &ObjectWatch[int64]{seen: []Observed[int64]{{t0.Add(-5 * time.Second), 2}, {t0.Add(3 * time.Second), 2}, {t0.Add(9 * time.Second), 1}, {t0.Add(30 * time.Second), 3}}}
	seen := w.Since(t0)
	if len(seen) != 4 || seen[0].Value != 2 || !seen[0].At.Equal(t0) {
		t.Fatalf("since: %v, want the value in force at t0 first, then the 3 changes", seen)
	}
	values, spurious := BelowFloor(seen, t0, 2)
	if spurious != 1 {
		t.Errorf("%v: %d below 2, want 1 (the 1 at +9s)", values, spurious)
	}
	if _, n := BelowFloor(w.Since(t0.Add(31*time.Second)), t0, 2); n != 0 {
		t.Errorf("after +30s only 3 was in force, yet %d counted below 2", n)
	}
}

// A held claim's time not Ready is summed from its own events only, from the state in force at
// the start; a deletion counts as not Ready to the end.
func TestNotReadyForSumsTheClaimsOwnOutages(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []Observed[ClaimState]{
		{at(-3), ClaimState{Name: "a", Ready: true}},
		{at(10), ClaimState{Name: "a", Ready: false}},
		{at(12), ClaimState{Name: "b", Ready: false}}, // another claim's outage is not a's
		{at(26), ClaimState{Name: "a", Ready: true}},
		{at(40), ClaimState{Name: "a", Deleted: true}},
	}
	if got := NotReadyFor(events, "a", t0, at(50)); got != 26*time.Second {
		t.Errorf("a not Ready %s, want 16 s (10..26) + 10 s (deleted at 40, to 50)", got)
	}
	if got := NotReadyFor(events, "b", t0, at(50)); got != 38*time.Second {
		t.Errorf("b not Ready %s, want 38 s (12..50)", got)
	}
	if got := NotReadyFor(events, "c", t0, at(50)); got != 0 {
		t.Errorf("c has no event and was Ready, yet %s counted", got)
	}
	if !ClaimDeleted(events, "a") || ClaimDeleted(events, "b") {
		t.Error("ClaimDeleted: want a deleted, b not")
	}
}

// The fallback record prints when the condition was True, open or closed.
func TestFallbackSpans(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := &FallbackRecord{}
	r.seen = []Observed[bool]{{t0.Add(-time.Second), false}, {t0.Add(17 * time.Second), true}, {t0.Add(70 * time.Second), false}, {t0.Add(80 * time.Second), true}}
	if got, want := r.Spans(t0), "+17 s to +70 s, from +80 s"; got != want {
		t.Errorf("spans %q, want %q", got, want)
	}
	r.seen = r.seen[:1]
	if got := r.Spans(t0); got != "never" {
		t.Errorf("spans %q, want never", got)
	}
}

// The scaler error counter is summed over the stack's ScaledObject only.
func TestSumMetricMatchesEveryLabel(t *testing.T) {
	text := `# HELP keda_scaler_detail_errors_total errors
# TYPE keda_scaler_detail_errors_total counter
keda_scaler_detail_errors_total{namespace="ns",scaledObject="warm-pool",scaler="metrics-api-scaler",triggerIndex="0"} 3
keda_scaler_detail_errors_total{namespace="other",scaledObject="warm-pool",scaler="metrics-api-scaler",triggerIndex="0"} 7
keda_scaler_detail_errors_total{namespace="ns",scaledObject="warm-pool",scaler="metrics-api-scaler",triggerIndex="1"} 2
keda_scaler_detail_errors_totalx{namespace="ns",scaledObject="warm-pool"} 100
`
	got, err := SumMetric(bufio.NewScanner(strings.NewReader(text)), "keda_scaler_detail_errors_total", `namespace="ns"`, `scaledObject="warm-pool"`)
	if err != nil || got != 5 {
		t.Errorf("sum %v (%v), want 5: the two samples of ns/warm-pool", got, err)
	}
}

// The probe's time to Ready is read from its own first Ready event after it was created.
func TestFirstReadyIsTheClaimsOwnFirstReadyEvent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	events := []Observed[ClaimState]{
		{t0.Add(-time.Second), ClaimState{Name: "probe", Ready: true}}, // before creation: not this probe
		{t0.Add(50 * time.Millisecond), ClaimState{Name: "other", Ready: true}},
		{t0.Add(80 * time.Millisecond), ClaimState{Name: "probe"}},
		{t0.Add(120 * time.Millisecond), ClaimState{Name: "probe", Ready: true}},
	}
	at, ok := FirstReady(events, "probe", t0)
	if !ok || at.Sub(t0) != 120*time.Millisecond {
		t.Errorf("FirstReady %v %v, want +120ms", at.Sub(t0), ok)
	}
	if _, ok := FirstReady(events[:3], "probe", t0); ok {
		t.Error("a probe never Ready after t0 was reported Ready")
	}
}
