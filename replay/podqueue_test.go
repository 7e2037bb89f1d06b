package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Which pending pod the scheduler tries first, as its backoff decides.
func TestPodQueueOrder(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	fails := func(q *PodQueue[string], t time.Duration) { q.Retry(t, func(string) bool { return false }) }
	queue := func() *PodQueue[string] {
		q := &PodQueue[string]{Backoff: time.Second, MaxBackoff: 10 * time.Second}
		q.Add("old", s(1))
		for _, at := range []float64{5, 10, 15} { // three events: old fails at each, backoff 8 s
			fails(q, s(at))
		}
		q.Add("new", s(20)) // backoff 1 s
		return q
	}
	assert.Equal(t, []string{"new", "old"}, queue().Order(s(21.5)), "new's backoff is over (21 s), old's is not (23 s)")
	assert.Equal(t, []string{"new", "old"}, queue().Order(s(20.5)), "both backing off: new's ends first (21 s against 23 s)")
	assert.Equal(t, []string{"old", "new"}, queue().Order(s(23.5)), "both over: the longest since its last failure first")

	// A round keeps its order for the next: old failed first at 23.5 s, so it stays ahead.
	q := queue()
	fails(q, s(23.5))
	assert.Equal(t, []string{"old", "new"}, q.Order(s(40)))
	// ... and a pod bound leaves.
	q.Retry(s(40), func(p string) bool { return p == "old" })
	assert.Equal(t, []string{"new"}, q.Order(s(40)))

	// Without a backoff: first come, first bound.
	fifo := &PodQueue[string]{}
	fifo.Add("a", s(1))
	fifo.Add("b", s(2))
	fails(fifo, s(3))
	assert.Equal(t, []string{"a", "b"}, fifo.Order(s(30)))

	// Remove takes the first match, RemoveNewest the one queued last.
	r := &PodQueue[string]{}
	for i, p := range []string{"w1", "c", "w2"} {
		r.Add(p, s(float64(i)))
	}
	assert.True(t, r.RemoveNewest(func(p string) bool { return p[0] == 'w' }))
	assert.Equal(t, []string{"w1", "c"}, r.Order(0))
	assert.True(t, r.Remove(func(p string) bool { return p == "c" }))
	assert.False(t, r.Remove(func(p string) bool { return p == "c" }))
	assert.Equal(t, 1, r.Len())
}
