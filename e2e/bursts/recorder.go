package bursts

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// Recorder watches every policy's sandboxes and claims and keeps, with the
// time it saw each change: when each claim became Ready and which sandbox it
// got, each sandbox's launch type, and how many sandboxes of each pool nobody
// holds (Ready, or still booting).
type Recorder struct {
	mu sync.Mutex
	// sandboxes by namespace, then name: one event recounts its namespace
	// only (a run holds tens of thousands of sandboxes across namespaces).
	sandboxes map[string]map[string]*sandboxState
	claims    map[string]*ClaimResult // namespace/name
	samples   map[string][]Sample     // namespace
	specs     map[string][]Step       // namespace: the pool's spec.replicas, At from the Unix epoch
	boots     map[string][]boot
	pods      map[string]map[string]*podState // namespace, then name
	now       func() time.Time
}

// boot is one sandbox's boot: it ended (the sandbox Ready) at readyAt, took after it was first seen.
type boot struct {
	readyAt time.Time
	took    time.Duration
}

type sandboxState struct {
	firstSeen  time.Time
	ready      bool
	poolOwned  bool // its controller is the warm pool: nobody holds it
	gone       bool
	launchType string
}

// NewRecorder returns a recorder for namespaces whose name starts with "bursts-".
func NewRecorder() *Recorder {
	return &Recorder{sandboxes: map[string]map[string]*sandboxState{}, claims: map[string]*ClaimResult{},
		samples: map[string][]Sample{}, specs: map[string][]Step{}, boots: map[string][]boot{},
		pods: map[string]map[string]*podState{}, now: time.Now}
}

// Start runs the informers until ctx ends and waits for their first sync.
func (r *Recorder) Start(ctx context.Context, client dynamic.Interface) bool {
	f := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	sb := f.ForResource(gvr.Sandbox).Informer()
	cl := f.ForResource(gvr.SandboxClaim).Informer()
	wp := f.ForResource(gvr.SandboxWarmPool).Informer()
	po := f.ForResource(podsGVR).Informer()
	_, _ = sb.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.sandbox(o, false) },
		UpdateFunc: func(_, o any) { r.sandbox(o, false) },
		DeleteFunc: func(o any) { r.sandbox(o, true) },
	})
	_, _ = cl.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.claim(o) },
		UpdateFunc: func(_, o any) { r.claim(o) },
	})
	_, _ = wp.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.pool(o) },
		UpdateFunc: func(_, o any) { r.pool(o) },
	})
	_, _ = po.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.pod(o, false) },
		UpdateFunc: func(_, o any) { r.pod(o, false) },
		DeleteFunc: func(o any) { r.pod(o, true) },
	})
	f.Start(ctx.Done())
	return cache.WaitForCacheSync(ctx.Done(), sb.HasSynced, cl.HasSynced, wp.HasSynced, po.HasSynced)
}

func ours(ns string) bool { return strings.HasPrefix(ns, "bursts-") }

func asObject(o any) *unstructured.Unstructured {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	u, _ := o.(*unstructured.Unstructured)
	return u
}

func readyCondition(u *unstructured.Unstructured) bool {
	return hasCondition(u, "Ready", string(metav1.ConditionTrue), "")
}

// hasCondition reports whether u has status.conditions[type=typ] with status, and with reason
// unless reason is "".
func hasCondition(u *unstructured.Unstructured, typ, status, reason string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == status && (reason == "" || m["reason"] == reason) {
			return true
		}
	}
	return false
}

// entry is byNamespace[ns][name], made with fresh() when missing: the recorder keeps its
// objects by namespace, so one event recounts its namespace only.
func entry[V any](byNamespace map[string]map[string]*V, ns, name string, fresh func() *V) *V {
	byName := byNamespace[ns]
	if byName == nil {
		byName = map[string]*V{}
		byNamespace[ns] = byName
	}
	v := byName[name]
	if v == nil {
		v = fresh()
		byName[name] = v
	}
	return v
}

func (r *Recorder) sandbox(o any, deleted bool) {
	u := asObject(o)
	if u == nil || !ours(u.GetNamespace()) {
		return
	}
	now := r.now()
	ns := u.GetNamespace()
	owner := metav1.GetControllerOf(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := entry(r.sandboxes, ns, u.GetName(), func() *sandboxState { return &sandboxState{firstSeen: now} })
	ready := readyCondition(u)
	if ready && !s.ready {
		r.boots[ns] = append(r.boots[ns], boot{readyAt: now, took: now.Sub(s.firstSeen)})
	}
	s.ready = ready
	s.poolOwned = owner != nil && owner.Kind == "SandboxWarmPool"
	s.gone = deleted || u.GetDeletionTimestamp() != nil
	if lt := u.GetLabels()[LaunchTypeLabel]; lt != "" {
		s.launchType = lt
	}
	r.sample(ns, now)
}

// sample appends the namespace's unheld counts if they changed.
func (r *Recorder) sample(ns string, now time.Time) {
	var cur Sample
	cur.At = now
	for _, s := range r.sandboxes[ns] {
		if s.gone || !s.poolOwned {
			continue
		}
		if s.ready {
			cur.Ready++
		} else {
			cur.Booting++
		}
	}
	if l := r.samples[ns]; len(l) > 0 && l[len(l)-1].Ready == cur.Ready && l[len(l)-1].Booting == cur.Booting {
		return
	}
	r.samples[ns] = append(r.samples[ns], cur)
}

func (r *Recorder) claim(o any) {
	u := asObject(o)
	if u == nil || !ours(u.GetNamespace()) || !readyCondition(u) {
		return
	}
	now := r.now()
	key := u.GetNamespace() + "/" + u.GetName()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.claims[key]
	if c == nil || !c.Ready.IsZero() {
		return // not one the replayer created, or already seen Ready
	}
	c.Ready = now
	c.Sandbox, _, _ = unstructured.NestedString(u.Object, "status", "sandbox", "name")
}

// pool records a pool's spec.replicas when it changes.
func (r *Recorder) pool(o any) {
	u := asObject(o)
	if u == nil || !ours(u.GetNamespace()) {
		return
	}
	spec, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := u.GetNamespace()
	if l := r.specs[ns]; len(l) > 0 && l[len(l)-1].Value == float64(spec) {
		return
	}
	r.specs[ns] = append(r.specs[ns], Step{At: time.Duration(now.UnixNano()), Value: float64(spec)})
}

// Creating records that the client is about to create claim name in ns.
func (r *Recorder) Creating(ns, name string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claims[ns+"/"+name] = &ClaimResult{Name: name, Created: at}
}

// Deleting records that the client is about to delete claim name in ns.
func (r *Recorder) Deleting(ns, name string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.claims[ns+"/"+name]; c != nil {
		c.Deleted = at
	}
}

// Result gathers policy p's outcome over [from, to).
func (r *Recorder) Result(p Policy, from, to time.Time) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := p.Namespace()
	res := Result{Policy: p}
	for _, b := range r.boots[ns] {
		res.Boots = append(res.Boots, b.took)
	}
	for k, c := range r.claims {
		if !strings.HasPrefix(k, ns+"/") {
			continue
		}
		cr := *c
		if s := r.sandboxes[ns][cr.Sandbox]; s != nil && cr.Sandbox != "" {
			cr.LaunchType = s.launchType
		}
		res.Claims = append(res.Claims, cr)
	}
	res.IdleWarm, res.IdleBooting = PodSeconds(r.samples[ns], from, to)
	return res
}

// Timeline is policy p's pool over [from, to), times counted from from:
// its spec.replicas and its Ready unheld sandboxes, each starting with the
// value it had at from (the demand comes from the trace).
func (r *Recorder) Timeline(p Policy, from, to time.Time) Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := p.Namespace()
	tl := Timeline{Policy: p.Name}
	var specs []Sample
	for _, s := range r.specs[ns] {
		specs = append(specs, Sample{At: time.Unix(0, int64(s.At)), Ready: int(s.Value)})
	}
	tl.Spec = window(specs, ready, from, to)
	tl.Ready = window(r.samples[ns], ready, from, to)
	tl.Booting = window(r.samples[ns], func(s Sample) int { return s.Booting }, from, to)
	for _, b := range r.boots[ns] {
		if !b.readyAt.Before(from) && b.readyAt.Before(to) {
			tl.Boots = append(tl.Boots, Step{At: b.readyAt.Sub(from), Value: b.took.Seconds()})
		}
	}
	return tl
}

// window turns one count of samples (value: Ready, say) into steps over
// [from, to), relative to from, the first one at 0 holding the value at from.
func window(samples []Sample, value func(Sample) int, from, to time.Time) []Step {
	steps := []Step{{At: 0}}
	for _, s := range samples {
		switch {
		case !s.At.After(from):
			steps[0].Value = float64(value(s))
		case s.At.Before(to):
			steps = append(steps, Step{At: s.At.Sub(from), Value: float64(value(s))})
		}
	}
	return steps
}

// ready is a sample's Ready count, for window.
func ready(s Sample) int { return s.Ready }
