package bursts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// Two slots free on n1 while the pool's pods wait; the scheduler's backoff, driven by the other
// pool's pods leaving, picks who takes each, where first come and the newest do not both.
func TestFreedSlotChoices(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	wall := &replay.WallClock{}
	pool := RecordedRow{Family: "day", Wall: wall, LivePods: []PodTimes{
		{Name: "x1", Bound: s(0.5), Node: "n1", Gone: s(22)}, // frees a slot at 22 s
		{Name: "x2", Bound: s(0.6), Node: "n1", Gone: s(40)}, // and at 40 s
		{Name: "a", Unschedulable: s(1)},                     // backed off 10 s by the other pool's events
		{Name: "b", Unschedulable: s(20), Bound: s(22.05), Node: "n1"},
		{Name: "d", Unschedulable: s(21.2), Deleting: s(21.8), Gone: s(21.9)}, // its claim deleted: leaves the queue
		{Name: "c", Unschedulable: s(21.5), Bound: s(40.05), Node: "n1"},
	}}
	// The other pool on the same plane: its node's first pod at 2 s, its pods gone at 5, 10, 15 s.
	other := RecordedRow{Family: "day", Wall: wall, LivePods: []PodTimes{
		{Name: "y1", Bound: s(2), Node: "m", Gone: s(5)},
		{Name: "y2", Bound: s(3), Node: "m", Gone: s(10)},
		{Name: "y3", Bound: s(4), Node: "m", Gone: s(15)},
	}}
	// A pool on another plane, whose pod gone at 21 s the pool's scheduler never saw.
	elsewhere := RecordedRow{Family: "burst", Wall: wall, LivePods: []PodTimes{{Name: "z", Bound: s(3), Node: "q", Gone: s(21)}}}

	got := LiveDayRecord{Rows: []RecordedRow{pool, other, elsewhere}}.FreedSlotChoices()
	// At 22 s: b's backoff is over (21 s), c's ends at 22.5 s, a's at 25 s: b. At 40 s all are
	// over, a and c failed at 22 s, c first in that round: c.
	assert.Equal(t, 2, got.Slots)
	assert.Equal(t, 2, got.Backoff, "the backoff picks b, then c")
	assert.Equal(t, 0, got.Oldest, "first come picks a twice")
	assert.Equal(t, 1, got.Newest, "the newest is c both times")
	assert.InDelta(t, 1.0/3+1.0/2, got.Chance, 1e-9, "three pending at 22 s, two at 40 s")

	assert.Zero(t, LiveDayRecord{Rows: []RecordedRow{{Family: "day"}}}.FreedSlotChoices().Slots, "no pods' times: nothing to read")
}
