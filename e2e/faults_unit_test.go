package e2e

import (
	"testing"
	"time"
)

// The fault judge reads the watch's record: the value in force when the part went down, then
// every change; one value under the held claims' size is a spurious scale-down.
func TestFaultJudgeCountsEveryValueBelowTheHeldSize(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := &poolWatch{seen: []replicasAt{{t0.Add(-5 * time.Second), 2}, {t0.Add(3 * time.Second), 2}, {t0.Add(9 * time.Second), 1}, {t0.Add(30 * time.Second), 3}}}
	seen := w.since(t0)
	if len(seen) != 4 || seen[0].replicas != 2 || !seen[0].at.Equal(t0) {
		t.Fatalf("since: %v, want the value in force at t0 first, then the 3 changes", seen)
	}
	values, spurious := belowFloor(seen, t0, 2)
	if spurious != 1 {
		t.Errorf("%v: %d below 2, want 1 (the 1 at +9s)", values, spurious)
	}
	if _, n := belowFloor(w.since(t0.Add(31*time.Second)), t0, 2); n != 0 {
		t.Errorf("after +30s only 3 was in force, yet %d counted below 2", n)
	}
}
