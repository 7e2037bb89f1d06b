package replay

import (
	"sort"
	"time"
)

// Held is the number of claims held from At on, until the next Held.
type Held struct {
	At     time.Duration
	Claims int
}

// HeldSteps is the claims held over the trace as a step function (what the pictures draw): 0 at
// the start, then one step per moment a claim is created or deleted, a create and a delete at
// the same moment one step.
func (t *Trace) HeldSteps() []Held {
	type event struct {
		at    time.Duration
		delta int
	}
	events := make([]event, 0, 2*len(t.Arrivals))
	for _, a := range t.Arrivals {
		events = append(events, event{a.At, +1}, event{a.At + a.Lifetime, -1})
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
	steps := []Held{{At: 0, Claims: 0}}
	n := 0
	for _, e := range events {
		n += e.delta
		if last := &steps[len(steps)-1]; last.At == e.at {
			last.Claims = n
		} else {
			steps = append(steps, Held{At: e.at, Claims: n})
		}
	}
	return steps
}
