package bursts

import (
	"cmp"
	"slices"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// FreedSlotChoices is which pending pod the scheduler gave a freed slot to, on a record with
// the pods' times: over the slots that freed (a pod gone, a node's first pod) while two or more
// of the pool's pods were pending and that one of them took within FreedSlotTaken, how many
// each rule picks right. The rules are the model's: first come, first bound (Oldest), and
// kube-scheduler's backoff (replay.PodQueue with replay.SchedulerBackoff), driven by every event
// of the control plane the row ran on; Newest and Chance (a pick at random, expected) are
// there to read them against.
type FreedSlotChoices struct {
	Slots                   int
	Oldest, Newest, Backoff int
	Chance                  float64
}

// FreedSlotTaken is how soon after a slot frees a binding to its node counts as taking it: the
// record's slots went to a pending pod within 0.15 s at p90 (docs/bursts.md).
const FreedSlotTaken = 300 * time.Millisecond

// FreedSlotChoices reads the record's freed slots (none without the pods' times).
func (rec LiveDayRecord) FreedSlotChoices() FreedSlotChoices {
	var out FreedSlotChoices
	done := make([]bool, len(rec.Rows))
	for i := range rec.Rows {
		if done[i] {
			continue
		}
		var plane []int // the rows that ran on row i's control plane
		for j := range rec.Rows {
			if j == i || rec.Rows[j].ranBeside(rec.Rows[i]) {
				plane = append(plane, j)
				done[j] = true
			}
		}
		rec.freedSlotsOn(plane, &out)
	}
	return out
}

// planePod is one pod of a control plane's rows.
type planePod struct {
	row int
	PodTimes
}

// planeEvent is what happened to a pod (or a node) at a time.
type planeEvent struct {
	at   time.Duration
	kind int // in order within one instant: a requeue, then a pod found unschedulable, then a binding or one leaving the queue
	pod  int
	node string
	row  int
}

const (
	eventRequeue = iota
	eventPending
	eventBound
	eventLeaves
)

func (rec LiveDayRecord) freedSlotsOn(rows []int, out *FreedSlotChoices) {
	var pods []planePod
	for _, r := range rows {
		for _, p := range rec.Rows[r].LivePods {
			pods = append(pods, planePod{row: r, PodTimes: p})
		}
	}
	var events []planeEvent
	type firstPod struct {
		at  time.Duration
		row int
	}
	first := map[string]firstPod{}
	for k, p := range pods {
		if p.Unschedulable > 0 && (p.Bound == 0 || p.Unschedulable <= p.Bound) {
			events = append(events, planeEvent{at: p.Unschedulable, kind: eventPending, pod: k})
			if p.Bound == 0 && p.Gone > 0 { // deleted while pending: the scheduler drops it once marked
				events = append(events, planeEvent{at: cmp.Or(p.Deleting, p.Gone), kind: eventLeaves, pod: k})
			}
		}
		if p.Bound > 0 {
			events = append(events, planeEvent{at: p.Bound, kind: eventBound, pod: k, node: p.Node})
			if f, ok := first[p.Node]; p.Node != "" && (!ok || p.Bound < f.at) {
				first[p.Node] = firstPod{p.Bound, p.row}
			}
			if p.Gone > 0 { // an assigned pod deleted: every pending pod is tried again
				events = append(events, planeEvent{at: p.Gone, kind: eventRequeue, pod: k, node: p.Node, row: p.row})
			}
		}
	}
	for n, f := range first { // a node added: taken as its first pod's binding, 10 ms before
		events = append(events, planeEvent{at: f.at - 10*time.Millisecond, kind: eventRequeue, pod: -1, node: n, row: f.row})
	}
	slices.SortStableFunc(events, func(a, b planeEvent) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.node, b.node), cmp.Compare(a.pod, b.pod))
	})

	queue := replay.NewPodQueue[int](replay.SchedulerBackoff(replay.Nodes{}))
	queued := map[int]bool{}
	type freed struct {
		at      time.Duration
		pending []int // the pool's pending pods, in the queue's order
	}
	slots := map[string]freed{} // by node
	for _, e := range events {
		switch e.kind {
		case eventPending:
			queue.Add(e.pod, e.at)
			queued[e.pod] = true
		case eventLeaves:
			if queued[e.pod] {
				queue.Remove(func(k int) bool { return k == e.pod })
				delete(queued, e.pod)
			}
		case eventRequeue:
			var own []int
			for _, k := range queue.Order(e.at) {
				if pods[k].row == e.row {
					own = append(own, k)
				}
			}
			if len(own) > 0 {
				slots[e.node] = freed{e.at, own}
			}
			queue.Retry(e.at, func(int) bool { return false })
		case eventBound:
			if !queued[e.pod] {
				continue
			}
			queue.Remove(func(k int) bool { return k == e.pod })
			delete(queued, e.pod)
			s, ok := slots[e.node]
			if !ok || e.at-s.at > FreedSlotTaken || !slices.Contains(s.pending, e.pod) {
				continue
			}
			delete(slots, e.node)
			if len(s.pending) < 2 {
				continue
			}
			out.Slots++
			out.Chance += 1 / float64(len(s.pending))
			byQueued := func(a, b int) int { return cmp.Compare(pods[a].Unschedulable, pods[b].Unschedulable) }
			if slices.MinFunc(s.pending, byQueued) == e.pod {
				out.Oldest++
			}
			if slices.MaxFunc(s.pending, byQueued) == e.pod {
				out.Newest++
			}
			if s.pending[0] == e.pod {
				out.Backoff++
			}
		}
	}
}
