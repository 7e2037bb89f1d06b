package replay

import (
	"sort"
	"time"
)

// PodQueue is kube-scheduler's queue of the pods it could not place, as the model keeps it, and
// the order in which the scheduler tries them when an event may have made room.
//
// With Backoff zero it is first come, first bound. With kube-scheduler's backoff
// (SchedulerBackoff: 1 s after a pod's first failure, doubling with each, at most 10 s;
// backend/queue, backoff_queue.go) the scheduler tries first the pods whose backoff is over,
// the longest since their last failure first (the active queue, PrioritySort), then the others
// by when their backoff ends (the backoff queue, popped when nothing else waits:
// SchedulerPopFromBackoffQ, on since Kubernetes 1.33). Every event that can make room (a pod
// gone from its node anywhere in the cluster, a node added) makes it try them all, and each
// failed try backs a pod off longer: the pods that came last, tried least, tend to go first.
type PodQueue[T any] struct {
	Backoff, MaxBackoff time.Duration
	pods                []queuedPod[T] // in the order of the last round
}

// NewPodQueue is an empty queue with nodes' backoff (PodBackoff, PodMaxBackoff).
func NewPodQueue[T any](nodes Nodes) PodQueue[T] {
	return PodQueue[T]{Backoff: nodes.PodBackoff, MaxBackoff: nodes.PodMaxBackoff}
}

// queuedPod is a pod in the queue: since queuedAt, failed failures times, the last at failedAt.
type queuedPod[T any] struct {
	pod                T
	queuedAt, failedAt time.Duration
	failures           int
}

// Len is the number of pods waiting.
func (q *PodQueue[T]) Len() int { return len(q.pods) }

// Add queues pod, which found no slot at t (its first failure).
func (q *PodQueue[T]) Add(pod T, t time.Duration) {
	q.pods = append(q.pods, queuedPod[T]{pod: pod, queuedAt: t, failedAt: t, failures: 1})
}

// Order is the order the scheduler tries the pods in at t.
func (q *PodQueue[T]) Order(t time.Duration) []T {
	var out []T
	for _, i := range q.order(t) {
		out = append(out, q.pods[i].pod)
	}
	return out
}

// Retry is one round at t: each pod in Order is offered to place, which binds it (true) or not;
// those it does not bind fail again at t and keep the order of this round.
func (q *PodQueue[T]) Retry(t time.Duration, place func(T) bool) {
	if len(q.pods) == 0 {
		return
	}
	order := q.order(t)
	kept := make([]queuedPod[T], 0, len(q.pods))
	for _, i := range order {
		p := q.pods[i]
		if place(p.pod) {
			continue
		}
		p.failures++
		p.failedAt = t
		kept = append(kept, p)
	}
	q.pods = kept
}

// Remove drops the first pod match reports (in the order of the last round), if any.
func (q *PodQueue[T]) Remove(match func(T) bool) bool {
	for i, p := range q.pods {
		if match(p.pod) {
			q.pods = append(q.pods[:i], q.pods[i+1:]...)
			return true
		}
	}
	return false
}

// RemoveNewest drops the pod queued last of those match reports, if any.
func (q *PodQueue[T]) RemoveNewest(match func(T) bool) bool {
	newest := -1
	for i, p := range q.pods {
		if match(p.pod) && (newest < 0 || p.queuedAt >= q.pods[newest].queuedAt) {
			newest = i
		}
	}
	if newest < 0 {
		return false
	}
	q.pods = append(q.pods[:newest], q.pods[newest+1:]...)
	return true
}

// order is Order as indexes of pods.
func (q *PodQueue[T]) order(t time.Duration) []int {
	order := make([]int, len(q.pods))
	for i := range order {
		order[i] = i
	}
	if q.Backoff <= 0 {
		return order
	}
	keys := make([]QueueKey, len(q.pods))
	for i, p := range q.pods {
		keys[i] = q.Key(p.failures, p.failedAt, t)
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]].Before(keys[order[b]]) })
	return order
}

// QueueKey is where a pending pod stands in the scheduler's order at a moment: its backoff over
// (in the active queue, by its last failure) or not (in the backoff queue, by when it ends).
type QueueKey struct {
	Waiting bool
	At      time.Duration // the last failure, or the backoff's end while Waiting
}

// Before reports whether the scheduler tries k before o.
func (k QueueKey) Before(o QueueKey) bool {
	if k.Waiting != o.Waiting {
		return !k.Waiting
	}
	return k.At < o.At
}

// Key is a pod's QueueKey at t, failed failures times, the last at failedAt.
func (q *PodQueue[T]) Key(failures int, failedAt, t time.Duration) QueueKey {
	backoff := q.Backoff << min(max(failures-1, 0), 30)
	if backoff > q.MaxBackoff || backoff <= 0 {
		backoff = q.MaxBackoff
	}
	if ends := failedAt + backoff; ends > t {
		return QueueKey{Waiting: true, At: ends}
	}
	return QueueKey{At: failedAt}
}
