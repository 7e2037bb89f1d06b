package bursts

import (
	"cmp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodTimes is one sandbox pod's life as the recorder saw it, from the run's start: when the
// scheduler marked it unschedulable (PodScheduled False, reason Unschedulable: what Karpenter
// provisions for), when it was bound and to which node, when it was marked for deletion and
// when it was gone. Zero: not seen within the run. The recorder's clock has the watch's
// latency only; the objects' own timestamps have whole seconds.
//
// From them: how long Karpenter took from a pending pod to a node, and the scheduler from a
// slot freed (a pod gone from a node) to a pending pod bound there.
type PodTimes struct {
	Name          string        `json:"name"`
	Node          string        `json:"node,omitempty"`
	Unschedulable time.Duration `json:"unschedulable,omitempty"`
	Bound         time.Duration `json:"bound,omitempty"`
	Deleting      time.Duration `json:"deleting,omitempty"`
	Gone          time.Duration `json:"gone,omitempty"`
}

// podState is PodTimes on the recorder's clock.
type podState struct {
	node                                 string
	unschedulable, bound, deleting, gone time.Time
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// pod records the first time the recorder saw a pod unschedulable, bound, marked for deletion
// and gone.
func (r *Recorder) pod(o any, deleted bool) {
	u := asObject(o)
	if u == nil || !ours(u.GetNamespace()) {
		return
	}
	now := r.now()
	node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := u.GetNamespace()
	s := entry(r.pods, ns, u.GetName(), func() *podState { return &podState{} })
	first := func(t *time.Time, seen bool) {
		if seen && t.IsZero() {
			*t = now
		}
	}
	first(&s.unschedulable, podUnschedulable(u))
	first(&s.bound, node != "")
	first(&s.deleting, deleted || u.GetDeletionTimestamp() != nil)
	first(&s.gone, deleted)
	if node != "" {
		s.node = node
	}
}

// podUnschedulable reports whether the scheduler marked u's PodScheduled condition False with
// reason Unschedulable.
func podUnschedulable(u *unstructured.Unstructured) bool {
	return hasCondition(u, "PodScheduled", string(metav1.ConditionFalse), "Unschedulable")
}

// Pods is policy p's pods that were unschedulable, bound, deleted or gone within [from, to),
// times from from (what came before from or at to and after is left zero), in the order of
// their first such time.
func (r *Recorder) Pods(p Policy, from, to time.Time) []PodTimes {
	r.mu.Lock()
	defer r.mu.Unlock()
	within := func(t time.Time) time.Duration {
		if t.IsZero() || t.Before(from) || !t.Before(to) {
			return 0
		}
		return t.Sub(from)
	}
	var out []PodTimes
	for name, s := range r.pods[p.Namespace()] {
		pt := PodTimes{Name: name, Node: s.node, Unschedulable: within(s.unschedulable), Bound: within(s.bound),
			Deleting: within(s.deleting), Gone: within(s.gone)}
		if pt.Unschedulable == 0 && pt.Bound == 0 && pt.Deleting == 0 && pt.Gone == 0 {
			continue
		}
		out = append(out, pt)
	}
	slices.SortFunc(out, func(a, b PodTimes) int {
		return cmp.Or(cmp.Compare(a.firstSeen(), b.firstSeen()), strings.Compare(a.Name, b.Name))
	})
	return out
}

// firstSeen is the first of p's times within the run.
func (p PodTimes) firstSeen() time.Duration {
	first := time.Duration(0)
	for _, t := range []time.Duration{p.Unschedulable, p.Bound, p.Deleting, p.Gone} {
		if t != 0 && (first == 0 || t < first) {
			first = t
		}
	}
	return first
}
