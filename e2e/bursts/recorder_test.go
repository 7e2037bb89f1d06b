package bursts

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

func fakeSandbox(ns, name string, ready, poolOwned bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"namespace": ns, "name": name},
	}}
	if poolOwned {
		u.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool", "name": "warm-pool", "uid": "u", "controller": true,
		}}
	}
	if ready {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	}
	return u
}

func fakePool(ns string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool",
		"metadata": map[string]any{"namespace": ns, "name": "warm-pool"},
		"spec":     map[string]any{"replicas": replicas},
	}}
}

// The recorder keeps each namespace's counts apart and gives a policy's
// timeline relative to the trace's start: spec.replicas and Ready unheld
// sandboxes, each holding its value at the start.
func TestRecorderTimelineFollowsOnePolicysPool(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r, at := recorderOnAClock(t0)
	p := Policy{Name: "arrivals", Trace: replay.TraceDay}
	other := Policy{Name: "fixed-4", Trace: replay.TraceDay}

	at(-5)
	r.pool(fakePool(p.Namespace(), 2))
	r.sandbox(fakeSandbox(p.Namespace(), "a", true, true), false)
	r.sandbox(fakeSandbox(other.Namespace(), "x", true, true), false) // another policy: not counted
	at(0)
	r.sandbox(fakeSandbox(p.Namespace(), "b", true, true), false) // 2 ready at the start
	at(3)
	r.sandbox(fakeSandbox(p.Namespace(), "a", true, false), false) // adopted by a claim: held, not idle
	at(15)
	r.pool(fakePool(p.Namespace(), 4))
	r.pool(fakePool(p.Namespace(), 4)) // unchanged: no step
	at(21)
	r.sandbox(fakeSandbox(p.Namespace(), "c", true, true), false)
	at(40)
	r.sandbox(fakeSandbox(p.Namespace(), "b", true, true), true) // deleted
	at(99)
	r.pool(fakePool("elsewhere", 9)) // not a benchmark namespace

	tl := r.Timeline(p, t0, t0.Add(60*time.Second))
	s := time.Second
	if want := []Step{{0, 2}, {15 * s, 4}}; !reflect.DeepEqual(tl.Spec, want) {
		t.Errorf("spec steps %v, want %v", tl.Spec, want)
	}
	// At 0: a and b ready and unheld (2); at 3 a is held (1); at 21 c (2); at 40 b goes (1).
	if want := []Step{{0, 2}, {3 * s, 1}, {21 * s, 2}, {40 * s, 1}}; !reflect.DeepEqual(tl.Ready, want) {
		t.Errorf("ready steps %v, want %v", tl.Ready, want)
	}
	if tl.Policy != "arrivals" {
		t.Errorf("timeline of %q", tl.Policy)
	}
	if o := r.Timeline(other, t0, t0.Add(60*time.Second)); !reflect.DeepEqual(o.Ready, []Step{{0, 1}}) || !reflect.DeepEqual(o.Spec, []Step{{0, 0}}) {
		t.Errorf("the other policy's timeline %+v: its one sandbox, no pool seen", o)
	}
	// Idle warm over [0, 60): 2*3 + 1*18 + 2*19 + 1*20 = 82 pod-seconds.
	if res := r.Result(p, t0, t0.Add(60*time.Second)); res.IdleWarm != 82 {
		t.Errorf("idle warm %v, want 82", res.IdleWarm)
	}
}

// The timeline also keeps the pool's unheld sandboxes still booting and each
// boot that ended: when its sandbox became Ready, and how long after it was
// first seen.
func TestRecorderTimelineKeepsTheBootingAndTheBoots(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r, at := recorderOnAClock(t0)
	p := Policy{Name: "arrivals", Trace: replay.TraceDay}

	at(-4)
	r.sandbox(fakeSandbox(p.Namespace(), "a", false, true), false) // booting before the start
	at(2)
	r.sandbox(fakeSandbox(p.Namespace(), "a", true, true), false) // Ready: a boot of 6 s
	at(10)
	r.sandbox(fakeSandbox(p.Namespace(), "b", false, true), false)
	at(13)
	r.sandbox(fakeSandbox(p.Namespace(), "b", true, true), false) // a boot of 3 s
	at(70)
	r.sandbox(fakeSandbox(p.Namespace(), "c", false, true), false)
	at(75)
	r.sandbox(fakeSandbox(p.Namespace(), "c", true, true), false) // after the window

	tl := r.Timeline(p, t0, t0.Add(60*time.Second))
	s := time.Second
	if want := []Step{{0, 1}, {2 * s, 0}, {10 * s, 1}, {13 * s, 0}}; !reflect.DeepEqual(tl.Booting, want) {
		t.Errorf("booting steps %v, want %v", tl.Booting, want)
	}
	if want := []Step{{2 * s, 6}, {13 * s, 3}}; !reflect.DeepEqual(tl.Boots, want) {
		t.Errorf("boots %v, want %v", tl.Boots, want)
	}
	if got := r.Result(p, t0, t0.Add(60*time.Second)).Boots; !reflect.DeepEqual(got, []time.Duration{6 * s, 3 * s, 5 * s}) {
		t.Errorf("the result's boots %v, want every boot seen", got)
	}
}

// recorderOnAClock is a recorder whose clock stands at t0 until at(s) moves it to s seconds past t0.
func recorderOnAClock(t0 time.Time) (*Recorder, func(s int)) {
	clock := t0
	r := NewRecorder()
	r.now = func() time.Time { return clock }
	return r, func(s int) { clock = t0.Add(time.Duration(s) * time.Second) }
}
