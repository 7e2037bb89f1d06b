package bursts

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

var (
	sandboxGVR = schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}
	claimGVR   = schema.GroupVersionResource{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxclaims"}
)

// Recorder watches every policy's sandboxes and claims and keeps, with the
// time it saw each change: when each claim became Ready and which sandbox it
// got, each sandbox's launch type, and how many sandboxes of each pool nobody
// holds (Ready, or still booting).
type Recorder struct {
	mu        sync.Mutex
	sandboxes map[string]*sandboxState // namespace/name
	claims    map[string]*ClaimResult  // namespace/name
	samples   map[string][]Sample      // namespace
	boots     map[string][]time.Duration
	now       func() time.Time
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
	return &Recorder{sandboxes: map[string]*sandboxState{}, claims: map[string]*ClaimResult{},
		samples: map[string][]Sample{}, boots: map[string][]time.Duration{}, now: time.Now}
}

// Start runs the informers until ctx ends and waits for their first sync.
func (r *Recorder) Start(ctx context.Context, client dynamic.Interface) bool {
	f := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	sb := f.ForResource(sandboxGVR).Informer()
	cl := f.ForResource(claimGVR).Informer()
	_, _ = sb.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.sandbox(o, false) },
		UpdateFunc: func(_, o any) { r.sandbox(o, false) },
		DeleteFunc: func(o any) { r.sandbox(o, true) },
	})
	_, _ = cl.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.claim(o) },
		UpdateFunc: func(_, o any) { r.claim(o) },
	})
	f.Start(ctx.Done())
	return cache.WaitForCacheSync(ctx.Done(), sb.HasSynced, cl.HasSynced)
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
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" && m["status"] == string(metav1.ConditionTrue) {
			return true
		}
	}
	return false
}

func (r *Recorder) sandbox(o any, deleted bool) {
	u := asObject(o)
	if u == nil || !ours(u.GetNamespace()) {
		return
	}
	now := r.now()
	ns, key := u.GetNamespace(), u.GetNamespace()+"/"+u.GetName()
	owner := metav1.GetControllerOf(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sandboxes[key]
	if s == nil {
		s = &sandboxState{firstSeen: now}
		r.sandboxes[key] = s
	}
	ready := readyCondition(u)
	if ready && !s.ready {
		r.boots[ns] = append(r.boots[ns], now.Sub(s.firstSeen))
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
	prefix := ns + "/"
	for k, s := range r.sandboxes {
		if !strings.HasPrefix(k, prefix) || s.gone || !s.poolOwned {
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

// Creating records that the client is about to create claim name in ns.
func (r *Recorder) Creating(ns, name string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claims[ns+"/"+name] = &ClaimResult{Name: name, Created: at}
}

// Result gathers policy p's outcome over [from, to).
func (r *Recorder) Result(p Policy, from, to time.Time) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns := p.Namespace()
	res := Result{Policy: p, Boots: append([]time.Duration(nil), r.boots[ns]...)}
	for k, c := range r.claims {
		if !strings.HasPrefix(k, ns+"/") {
			continue
		}
		cr := *c
		if s := r.sandboxes[ns+"/"+cr.Sandbox]; s != nil && cr.Sandbox != "" {
			cr.LaunchType = s.launchType
		}
		res.Claims = append(res.Claims, cr)
	}
	res.IdleWarm, res.IdleBooting = PodSeconds(r.samples[ns], from, to)
	return res
}
