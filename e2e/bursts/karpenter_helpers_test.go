package bursts

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// What TestLiveWarmPoolOnKarpenter reads and computes that needs no cluster:
// the slots an instance type has for a sandbox, and the ledger of NodeClaims
// that node-seconds are read from (karpenter_test.go holds both to hand-made
// figures).

// karpenterSandboxRequests are the sandbox's requests in
// TestLiveWarmPoolOnKarpenter: the README's two-pool example's code
// interpreter (program/pools_test.go's twoPools, "code": 500m CPU, 1Gi), what
// a real agent template asks.
var karpenterSandboxRequests = map[string]string{"cpu": "500m", "memory": "1Gi"}

// doNotDisrupt is the annotation the program's template sets on every sandbox
// pod (components.SandboxPodAnnotations).
const doNotDisrupt = "karpenter.sh/do-not-disrupt"

// karpenterPool is the live test's pool as the program renders it (Render:
// awsprogram.Run under mocks): a fixed pool of 1 whose template has
// karpenterSandboxRequests, its objects, and its pod template as the sandbox
// pods get it, with the requests read back from it.
func karpenterPool(kubeconfig string) (Policy, *Objects, corev1.PodTemplateSpec, map[string]string, error) {
	var tmpl corev1.PodTemplateSpec
	cfg, _ := json.Marshal(map[string]any{"resources": map[string]any{"requests": karpenterSandboxRequests}})
	p := Policy{Name: "karpenter", Fixed: 1, Config: map[string]string{"template": string(cfg)}}
	objs, err := Render(p, map[string]string{
		"clusterMode": "existing", "kubeconfig": kubeconfig, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt", "maxReplicas": "20", "loadCap": "1",
	}, "")
	if err != nil {
		return p, nil, tmpl, nil, err
	}
	st := objs.Find("sandboxtemplates")
	if st == nil || objs.Find("sandboxwarmpools") == nil {
		return p, nil, tmpl, nil, fmt.Errorf("the program rendered no SandboxTemplate or SandboxWarmPool: %s", kindsOf(objs))
	}
	podTemplate, _, _ := unstructured.NestedMap(st.Object, "spec", "podTemplate")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(podTemplate, &tmpl); err != nil {
		return p, nil, tmpl, nil, fmt.Errorf("the rendered pod template: %w", err)
	}
	if len(tmpl.Spec.Containers) != 1 || tmpl.Spec.RuntimeClassName == nil {
		return p, nil, tmpl, nil, fmt.Errorf("the rendered pod template has %d containers, runtimeClassName %v: want one, set", len(tmpl.Spec.Containers), tmpl.Spec.RuntimeClassName)
	}
	requests := map[string]string{}
	for name, q := range tmpl.Spec.Containers[0].Resources.Requests {
		requests[string(name)] = q.String()
	}
	return p, objs, tmpl, requests, nil
}

// karpenterKubeReserved is what Karpenter's KWOK provider takes off every
// instance type before pods (kwok/cloudprovider/helpers.go, v1.14.1): the
// node's allocatable is its size less this.
var karpenterKubeReserved = map[corev1.ResourceName]string{corev1.ResourceCPU: "100m", corev1.ResourceMemory: "10Mi"}

// slotsPerNode is how many pods of requests one node of type it holds: the
// least, over the requested resources, of allocatable / request, and at most
// its pod count (Karpenter's 110 when the type gives none). A resource the
// type does not size is refused: Karpenter could place no such pod.
func slotsPerNode(requests map[string]string, it localcluster.InstanceType) (int, error) {
	size := map[corev1.ResourceName]string{corev1.ResourceCPU: it.CPU, corev1.ResourceMemory: it.Memory}
	slots := int64(it.Pods)
	if slots == 0 {
		slots = 110
	}
	if len(requests) == 0 {
		return 0, fmt.Errorf("no requests: the pod's size is not set, so no number of slots follows from it")
	}
	for name, q := range requests {
		req, err := resource.ParseQuantity(q)
		if err != nil {
			return 0, fmt.Errorf("request %s=%q: %w", name, q, err)
		}
		capStr, ok := size[corev1.ResourceName(name)]
		if !ok {
			return 0, fmt.Errorf("request %s: instance type %s does not size it", name, it.Name)
		}
		alloc := resource.MustParse(capStr)
		alloc.Sub(resource.MustParse(karpenterKubeReserved[corev1.ResourceName(name)]))
		if req.MilliValue() <= 0 {
			continue
		}
		slots = min(slots, alloc.MilliValue()/req.MilliValue())
	}
	return int(slots), nil
}

// claimRecord is one NodeClaim as the ledger read it: the times are the API
// server's (whole seconds) except Gone, the first read that no longer listed
// it (the instance is terminated: Karpenter removes the NodeClaim's finalizer
// after the cloud provider's Delete).
type claimRecord struct {
	Name, Node, InstanceType string
	Created                  time.Time // the NodeClaim's creationTimestamp
	NodeCreated, NodeReady   time.Time // its Node's creationTimestamp and Ready condition
	Deleting                 time.Time // the NodeClaim's deletionTimestamp
	Gone                     time.Time
}

// seconds is the record's node-seconds up to now: from the NodeClaim's
// creation to its end (gone), or to now while it is there.
func (r claimRecord) seconds(now time.Time) float64 {
	end := now
	if !r.Gone.IsZero() {
		end = r.Gone
	}
	return end.Sub(r.Created).Seconds()
}

// claimLedger records every NodeClaim of the node pool from the reads given
// to observe, in the order they were first seen.
type claimLedger struct {
	mu    sync.Mutex
	recs  map[string]*claimRecord
	names []string
	reads int
}

func newClaimLedger() *claimLedger { return &claimLedger{recs: map[string]*claimRecord{}} }

// observe takes one read of the NodeClaims and Nodes at now.
func (l *claimLedger) observe(now time.Time, claims []unstructured.Unstructured, nodes []corev1.Node) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	listed := map[string]bool{}
	for _, u := range claims {
		name := u.GetName()
		listed[name] = true
		r, ok := l.recs[name]
		if !ok {
			r = &claimRecord{Name: name, Created: u.GetCreationTimestamp().Time}
			l.recs[name] = r
			l.names = append(l.names, name)
		}
		r.Gone = time.Time{} // listed: not gone (a NodeClaim's name is never reused)
		if d := u.GetDeletionTimestamp(); d != nil {
			r.Deleting = d.Time
		}
		if n, _, _ := unstructured.NestedString(u.Object, "status", "nodeName"); n != "" {
			r.Node = n
		}
		if it := u.GetLabels()[corev1.LabelInstanceTypeStable]; it != "" {
			r.InstanceType = it
		}
		if n := byName[r.Node]; n != nil {
			r.NodeCreated = n.CreationTimestamp.Time
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					r.NodeReady = c.LastTransitionTime.Time
				}
			}
		}
	}
	for _, name := range l.names {
		if r := l.recs[name]; !listed[name] && r.Gone.IsZero() {
			r.Gone = now
		}
	}
}

// snapshot is every record, in the order first seen.
func (l *claimLedger) snapshot() []claimRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]claimRecord, 0, len(l.names))
	for _, n := range l.names {
		out = append(out, *l.recs[n])
	}
	return out
}

// get is the record of one NodeClaim (ok false when never seen).
func (l *claimLedger) get(name string) (claimRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.recs[name]
	if !ok {
		return claimRecord{}, false
	}
	return *r, true
}

// seen is the set of NodeClaims seen so far.
func (l *claimLedger) seen() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]bool{}
	for _, n := range l.names {
		out[n] = true
	}
	return out
}

// run reads the node pool's NodeClaims and Nodes every interval until the
// returned stop is called; stop returns after the last read.
func (l *claimLedger) run(ctx context.Context, c *localcluster.Cluster, interval time.Duration) (stop func()) {
	return runNodePoolLedgers(ctx, c, map[string]*claimLedger{localcluster.KarpenterNodePool: l}, interval)
}

// costTable is the node-seconds of each NodeClaim, times relative to t0, and
// the total with its price: what EKS Auto Mode bills is instance time.
func costTable(recs []claimRecord, t0, now time.Time, pricePerHour float64) (table string, total float64) {
	var b strings.Builder
	rel := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%+.1fs", t.Sub(t0).Seconds())
	}
	sorted := append([]claimRecord(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Created.Before(sorted[j].Created) })
	fmt.Fprintf(&b, "%-28s %-10s %8s %8s %8s %8s %8s %9s\n", "NodeClaim", "type", "created", "node", "Ready", "deleting", "gone", "node-s")
	for _, r := range sorted {
		s := r.seconds(now)
		total += s
		gone := rel(r.Gone)
		if r.Gone.IsZero() {
			gone = "(there)"
		}
		fmt.Fprintf(&b, "%-28s %-10s %8s %8s %8s %8s %8s %9.1f\n", r.Name, r.InstanceType, rel(r.Created), rel(r.NodeCreated), rel(r.NodeReady), rel(r.Deleting), gone, s)
	}
	fmt.Fprintf(&b, "total %.1f node-seconds = %.5f USD at %.4f USD/h", total, total*pricePerHour/3600, pricePerHour)
	return b.String(), total
}
