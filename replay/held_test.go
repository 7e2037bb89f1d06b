package replay

import (
	"reflect"
	"testing"
	"time"
)

// HeldSteps steps at every create and delete, merges those at one moment, and agrees with
// ActiveAt at each step.
func TestHeldStepsFollowTheTrace(t *testing.T) {
	s := time.Second
	tr := &Trace{Arrivals: []Arrival{{At: 0, Lifetime: 10 * s}, {At: 5 * s, Lifetime: 10 * s}, {At: 10 * s, Lifetime: 2 * s}}}
	// t=0: 1; t=5: 2; t=10: one ends, one starts: 2; t=12: 1; t=15: 0.
	want := []Held{{0, 1}, {5 * s, 2}, {10 * s, 2}, {12 * s, 1}, {15 * s, 0}}
	got := tr.HeldSteps()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("HeldSteps = %v, want %v", got, want)
	}
	for _, st := range got {
		if st.Claims != tr.ActiveAt(st.At) {
			t.Errorf("at %s the step says %d, ActiveAt %d", st.At, st.Claims, tr.ActiveAt(st.At))
		}
	}
	if got := (&Trace{}).HeldSteps(); !reflect.DeepEqual(got, []Held{{0, 0}}) {
		t.Errorf("no claims: %v, want one step at 0", got)
	}
}
