package bursts

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

func fakePod(ns, name, node string, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{},
	}}
	if node != "" {
		u.Object["spec"].(map[string]any)["nodeName"] = node
	}
	var cs []any
	for _, c := range conds {
		cs = append(cs, c)
	}
	u.Object["status"] = map[string]any{"conditions": cs}
	return u
}

func terminating(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetDeletionTimestamp(&metav1.Time{Time: time.Unix(1, 0)})
	return u
}

var podUnschedulableCondition = map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}

// The recorder keeps, per policy, each pod's first time unschedulable (the condition Karpenter
// provisions for, not another reason, not a pod not yet tried), bound (and where), marked for
// deletion and gone, and leaves out what falls outside the window.
func TestRecorderKeepsThePodsTimes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r, at := recorderOnAClock(t0)
	p := Policy{Name: "arrivals", Trace: replay.TraceDay}
	other := Policy{Name: "fixed-4", Trace: replay.TraceDay}
	ns := p.Namespace()

	at(-3)
	r.pod(fakePod(ns, "before", "", podUnschedulableCondition), false) // before the window
	at(1)
	r.pod(fakePod(ns, "a", ""), false) // not tried yet
	r.pod(fakePod(ns, "gated", "", map[string]any{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}), false)
	r.pod(fakePod(ns, "b", "node-1"), false) // bound at once: never pending
	at(2)
	r.pod(fakePod(ns, "a", "", podUnschedulableCondition), false)
	r.pod(fakePod(other.Namespace(), "x", "", podUnschedulableCondition), false)
	r.pod(fakePod("kube-system", "y", "", podUnschedulableCondition), false)
	at(5)
	r.pod(fakePod(ns, "a", "", podUnschedulableCondition), false) // seen again: unschedulable since 2
	r.pod(fakePod(ns, "c", "", podUnschedulableCondition), false)
	at(6)
	r.pod(terminating(fakePod(ns, "b", "node-1")), false)
	at(7)
	r.pod(terminating(fakePod(ns, "b", "node-1")), true)
	at(9)
	r.pod(fakePod(ns, "a", "node-2", podUnschedulableCondition), false)
	at(12)
	r.pod(fakePod(ns, "a", "node-2", map[string]any{"type": "PodScheduled", "status": "True"}), false)
	r.pod(fakePod(ns, "c", "", podUnschedulableCondition), true) // deleted before it was bound

	s := time.Second
	b := PodTimes{Name: "b", Node: "node-1", Bound: s, Deleting: 6 * s, Gone: 7 * s}
	a := PodTimes{Name: "a", Node: "node-2", Unschedulable: 2 * s, Bound: 9 * s}
	c := PodTimes{Name: "c", Unschedulable: 5 * s, Deleting: 12 * s, Gone: 12 * s}
	if got, want := r.Pods(p, t0, t0.Add(60*s)), []PodTimes{b, a, c}; !reflect.DeepEqual(got, want) {
		t.Errorf("pods %+v, want %+v", got, want)
	}
	a.Bound, c.Deleting, c.Gone = 0, 0, 0
	if got, want := r.Pods(p, t0, t0.Add(8*s)), []PodTimes{b, a, c}; !reflect.DeepEqual(got, want) {
		t.Errorf("pods within 8 s %+v, want %+v", got, want)
	}
	if got := r.Pods(other, t0, t0.Add(60*s)); len(got) != 1 || got[0].Name != "x" {
		t.Errorf("the other policy's: %+v, want x alone", got)
	}
}
