package verifier

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authzv1 "k8s.io/api/authorization/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

const testNS = "warm-pool-autoscaling-keda"

// cluster is a fake API (typed + dynamic) with a small simulator standing in
// for KEDA, the HPA controller and agent-sandbox: claims are adopted from a
// warm pool, and while the ScaledObject exists the HPA sets spec.replicas to
// ceil(claims/target) within [min, max], and its HPA exists.
type cluster struct {
	t    *testing.T
	kube *kfake.Clientset
	dyn  *dynfake.FakeDynamicClient
	min  int64
	max  int64

	// knobs for the reject side
	keda              atomic.Bool // the HPA follows demand while the ScaledObject exists
	rogue             atomic.Bool // something moves the pool even without a ScaledObject
	cold              atomic.Bool // claims get cold-created sandboxes
	freshPods         atomic.Bool // adopted pods are created after the claim
	readyDelay        time.Duration
	stuckAt           int64 // when > 0, the HPA never goes above this
	kwok              bool
	noKubeletEndpoint bool            // the node publishes kubelet port 0
	denyAll           bool            // SubjectAccessReviews answer allowed=false to everything
	allowExtra        map[string]bool // "verb resource ns" the exporter is wrongly allowed
	sarErr            bool
	hpaMetricType     autoscalingv2.MetricTargetType

	noGC      atomic.Bool // the HPA outlives its ScaledObject
	noKEDA    atomic.Bool // KEDA does not create an HPA for a new ScaledObject
	kedaQuits atomic.Bool // KEDA stops working once the ScaledObject is gone
	mu        sync.Mutex
	seq       int
	firstSeen map[string]time.Time
	stopped   chan struct{}

	// pools are the stack's pools (empty at start: one, warm-pool in testNS, with min and max);
	// stackNS holds the exporter (testNS when empty).
	pools   []*simPool
	stackNS string
	// created records each claim's creation time by namespace, as the exporter remembers
	// arrivals (deleted claims included) for its windows.
	created           map[string][]time.Time
	shortWin, longWin time.Duration
	unlabelledNS      string // a namespace created without the stack's labels
	// exporterEndpoints are the ready endpoints behind the exporter's Service (0: every replica gone).
	exporterEndpoints int
}

// simPool is one pool of the simulated stack.
type simPool struct {
	name, ns, so string
	min, max     int64
	// formula, when set, is the arrivals policy: the ScaledObject carries it over the
	// arrivals_short and arrivals_long triggers, and the simulated HPA evaluates it on the
	// fake exporter's windows.
	formula string
	program *vm.Program
	// offBy is added to the simulated HPA's decision: spec.replicas off the formula.
	offBy int64
	// follows names another pool whose claims this pool's autoscaler also counts: the wiring
	// mistake the cross-pool control must catch.
	follows string
	// exporterPath is the path the pool's triggers read ("demand" or "demand/<name>").
	exporterPath string
}

// arrivalsFormula is an arrivals formula as components.ArrivalsFormula renders it (99 % warm
// hits, windows 30 s and 180 s, headroom 0, a refill of 36 s): 1 arrival in the short window
// -> 5, 2 -> 8, 3 -> 10. verify evaluates whatever formula the ScaledObject carries, so these
// tests hold it to one with large steps rather than to today's defaults.
const arrivalsFormula = "float((max(arrivals_short * 1.2, arrivals_long * 0.2) > 0 ? ceil(max(arrivals_short * 1.2, arrivals_long * 0.2) + 2.326348 * max(arrivals_short * 1.2, arrivals_long * 0.2) ** 0.5 + 1.235316) : 0) + 0)"

// addPool adds a pool to the simulated stack (before start); the first one added replaces
// the default warm-pool.
func (c *cluster) addPool(p *simPool) *simPool {
	if p.so == "" {
		p.so = p.name
	}
	if p.exporterPath == "" {
		p.exporterPath = "demand/" + p.name
	}
	if p.formula != "" {
		env := map[string]float64{"arrivals_short": 0, "arrivals_long": 0}
		prog, err := expr.Compile(p.formula, expr.Env(env), expr.AsFloat64())
		if err != nil {
			c.t.Fatalf("simulated formula: %v", err)
		}
		p.program = prog
	}
	c.pools = append(c.pools, p)
	return p
}

func (c *cluster) pool(ns string) *simPool {
	for _, p := range c.pools {
		if p.ns == ns {
			return p
		}
	}
	return nil
}

func (c *cluster) exporterNS() string {
	if c.stackNS != "" {
		return c.stackNS
	}
	return testNS
}

// arrivals counts the claims created in ns within the last d, deleted ones included.
func (c *cluster) arrivals(ns string, d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.created[ns] {
		if time.Since(t) <= d {
			n++
		}
	}
	return n
}

// targets are the config targets of every simulated pool.
func (c *cluster) targets() []PoolTarget {
	var out []PoolTarget
	for _, p := range c.pools {
		out = append(out, PoolTarget{Name: p.name, Namespace: p.ns, ScaledObject: p.so, ExporterPath: p.exporterPath, LoadCap: 3,
			OutputsMin: int(p.min), OutputsMax: int(p.max)})
	}
	return out
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, min: 1, max: 3, stopped: make(chan struct{}), hpaMetricType: autoscalingv2.AverageValueMetricType,
		firstSeen: map[string]time.Time{}, created: map[string][]time.Time{},
		// Seconds, not milliseconds: a claim must stay in the windows from the simulated HPA's
		// write to the runner's reading (a step's reading only counts inside the long window),
		// and a loaded machine has taken longer than 300 ms between the two.
		shortWin: 3 * time.Second, longWin: 6 * time.Second, exporterEndpoints: 2}
	c.keda.Store(true)
	return c
}

func nsObj(labels map[string]string) *corev1.Namespace {
	return nsNamed(testNS, labels)
}

func nsNamed(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// start builds the clients and runs the simulator until the test ends.
func (c *cluster) start(extraDyn ...runtime.Object) {
	c.t.Helper()
	// A node with a kubelet publishes its endpoint; KWOK's carry the annotation.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo:        corev1.NodeSystemInfo{KernelVersion: "6.18.56"}}}
	if c.kwok {
		node.Annotations = map[string]string{annoKwokNode: "fake"}
	}
	if c.noKubeletEndpoint {
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = 0
	}
	if len(c.pools) == 0 {
		c.addPool(&simPool{name: "warm-pool", ns: testNS, so: "warm-pool", min: c.min, max: c.max, exporterPath: "demand"})
	}
	sns := c.exporterNS()
	exporterDep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "claim-exporter", Namespace: sns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "claim-exporter"}}}}
	exporterPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "claim-exporter-54cfbb9984-pbhqd", Namespace: sns, Labels: map[string]string{"app": "claim-exporter"}},
		Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	good := map[string]string{labelManagedBy: projectName, labelStack: "warm-pool-autoscaling-keda.dev"}
	var endpoints []discoveryv1.Endpoint
	for i := range c.exporterEndpoints {
		endpoints = append(endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("198.18.0.%d", 10+i)}})
	}
	exporterSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "claim-exporter-abcde", Namespace: sns,
		Labels: map[string]string{discoveryv1.LabelServiceName: "claim-exporter"}}, AddressType: discoveryv1.AddressTypeIPv4, Endpoints: endpoints}
	kubeObjs := []runtime.Object{node, exporterDep, exporterPod, exporterSlice}
	seenNS := map[string]bool{}
	for _, ns := range append([]string{sns}, func() []string {
		var n []string
		for _, p := range c.pools {
			n = append(n, p.ns)
		}
		return n
	}()...) {
		if seenNS[ns] {
			continue
		}
		seenNS[ns] = true
		l := good
		if ns == c.unlabelledNS {
			l = map[string]string{"team": "a"}
		}
		kubeObjs = append(kubeObjs, nsNamed(ns, l))
	}
	c.kube = kfake.NewClientset(kubeObjs...)
	c.kube.PrependReactor("create", "subjectaccessreviews", c.answerSAR)

	scheme := runtime.NewScheme()
	var objs []runtime.Object
	for _, p := range c.pools {
		pool := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool",
			"metadata": map[string]any{"name": p.name, "namespace": p.ns},
			"spec":     map[string]any{"replicas": p.min, "sandboxTemplateRef": map[string]any{"name": p.name + "-agent"}},
			"status":   map[string]any{"replicas": p.min, "readyReplicas": p.min},
		}}
		// As the program writes it: a fallback KEDA uses, and a scale-up policy of its own.
		spec := map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool", "name": p.name},
			"minReplicaCount": p.min, "maxReplicaCount": p.max,
			"fallback": map[string]any{"failureThreshold": int64(3), "replicas": int64(0), "behavior": "currentReplicasIfHigher"},
			"advanced": map[string]any{"horizontalPodAutoscalerConfig": map[string]any{"behavior": map[string]any{
				"scaleUp": map[string]any{"stabilizationWindowSeconds": int64(0), "policies": []any{
					map[string]any{"type": "Pods", "value": p.max, "periodSeconds": int64(15)}}}}}}}
		if p.formula != "" {
			url := fmt.Sprintf("http://claim-exporter.%s.svc.cluster.local:8080/%s", sns, p.exporterPath)
			trig := func(name string) any {
				return map[string]any{"type": "metrics-api", "name": name, "metricType": "AverageValue",
					"metadata": map[string]any{"url": url, "valueLocation": name, "targetValue": "1", "format": "json", "timeout": "3000"}}
			}
			spec["pollingInterval"] = int64(1)
			spec["triggers"] = []any{trig("arrivals_short"), trig("arrivals_long")}
			spec["advanced"].(map[string]any)["scalingModifiers"] = map[string]any{"formula": p.formula, "target": "1", "metricType": "AverageValue"}
		}
		so := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
			"metadata": map[string]any{"name": p.so, "namespace": p.ns, "uid": "so-uid-0", "resourceVersion": "7",
				"finalizers": []any{"finalizeScaledObject"}, "labels": map[string]any{labelPartOf: projectName}},
			"spec": spec,
			// As KEDA writes it once it has read the triggers with a fallback configured.
			"status": map[string]any{"hpaName": "keda-hpa-" + p.so,
				"conditions": []any{
					map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady"},
					map[string]any{"type": "Fallback", "status": "False", "reason": "NoFallbackFound", "message": "No fallbacks are active on this scaled object"},
				},
				"health": map[string]any{"s0-metric-api-active_claims": map[string]any{"numberOfFailures": int64(0), "status": "Happy"}},
			},
		}}
		objs = append(objs, pool, so)
	}
	objs = append(objs, extraDyn...)
	c.dyn = dynfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, objs...)
	// The API server stamps uid and creationTimestamp; the fake does not.
	c.dyn.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured); ok {
			c.mu.Lock()
			c.seq++
			u.SetUID(types.UID(fmt.Sprintf("uid-%d", c.seq)))
			if a.GetResource().Resource == "sandboxclaims" {
				c.created[a.GetNamespace()] = append(c.created[a.GetNamespace()], time.Now())
			}
			c.mu.Unlock()
			u.SetCreationTimestamp(metav1.Now())
		}
		return false, nil, nil
	})
	for _, p := range c.pools {
		c.syncHPA(context.Background(), p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go c.loop(ctx)
	c.t.Cleanup(func() { cancel(); <-c.stopped })
}

func (c *cluster) loop(ctx context.Context) {
	defer close(c.stopped)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, p := range c.pools {
				c.syncHPA(ctx, p)
				c.adopt(ctx, p)
				c.scale(ctx, p)
			}
		}
	}
}

// soExists reads the first pool's ScaledObject.
func (c *cluster) soExists(ctx context.Context) (*unstructured.Unstructured, bool) {
	return c.soOf(ctx, c.pools[0])
}

func (c *cluster) soOf(ctx context.Context, p *simPool) (*unstructured.Unstructured, bool) {
	so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(p.ns).Get(ctx, p.so, metav1.GetOptions{})
	return so, err == nil
}

// syncHPA: KEDA creates keda-hpa-<so> owned by the ScaledObject; the garbage
// collector removes it when the ScaledObject goes.
func (c *cluster) syncHPA(ctx context.Context, p *simPool) {
	hpas := c.kube.AutoscalingV2().HorizontalPodAutoscalers(p.ns)
	so, ok := c.soOf(ctx, p)
	if !ok && c.kedaQuits.Load() {
		c.noKEDA.Store(true)
	}
	_, err := hpas.Get(ctx, "keda-hpa-"+p.so, metav1.GetOptions{})
	exists := err == nil
	switch {
	case ok && !exists && !c.noKEDA.Load():
		// KEDA never sets the HPA's minimum below 1.
		minR := int32(max(1, p.min))
		win := int32(0)
		avg := resource.MustParse("1")
		metric := "s0-metric-api-active_claims"
		if p.formula != "" {
			// With scalingModifiers KEDA gives the HPA one composite metric.
			metric = "s0-composite-metric"
		}
		h := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "keda-hpa-" + p.so, Namespace: p.ns,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject", Name: p.so, UID: so.GetUID()}}},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "extensions.agents.x-k8s.io/v1beta1", Kind: "SandboxWarmPool", Name: p.name},
				MinReplicas:    &minR, MaxReplicas: int32(p.max),
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: metric},
					Target: autoscalingv2.MetricTarget{Type: c.hpaMetricType, AverageValue: &avg, Value: &avg}}}},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &win},
					ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &win,
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: int32(p.max), PeriodSeconds: 15}}}},
			}}
		_, _ = hpas.Create(ctx, h, metav1.CreateOptions{})
	case !ok && exists && !c.noGC.Load():
		_ = hpas.Delete(ctx, "keda-hpa-"+p.so, metav1.DeleteOptions{})
	}
}

// adopt plays agent-sandbox: a new claim gets a warm Sandbox whose pod was
// booted earlier, then Ready.
func (c *cluster) adopt(ctx context.Context, p *simPool) {
	claims := c.dyn.Resource(gvr.SandboxClaim).Namespace(p.ns)
	l, err := claims.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range l.Items {
		cl := &l.Items[i]
		if claimSandboxName(cl) != "" {
			continue
		}
		c.mu.Lock()
		seen, ok := c.firstSeen[string(cl.GetUID())]
		if !ok {
			seen = time.Now()
			c.firstSeen[string(cl.GetUID())] = seen
		}
		c.mu.Unlock()
		if time.Since(seen) < c.readyDelay {
			continue
		}
		c.mu.Lock()
		c.seq++
		sbName := fmt.Sprintf("%s-%05d", p.name, c.seq)
		c.mu.Unlock()
		launch := "warm"
		podCreated := metav1.NewTime(time.Now().Add(-159 * time.Second))
		if c.cold.Load() {
			launch = "cold"
		}
		if c.freshPods.Load() {
			podCreated = metav1.NewTime(time.Now().Add(5 * time.Second))
		}
		sb := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
			"metadata": map[string]any{"name": sbName, "namespace": p.ns, "labels": map[string]any{labelLaunchType: launch}},
		}}
		_, _ = c.dyn.Resource(gvr.Sandbox).Namespace(p.ns).Create(ctx, sb, metav1.CreateOptions{})
		_, _ = c.kube.CoreV1().Pods(p.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sbName, Namespace: p.ns, CreationTimestamp: podCreated},
			Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}, metav1.CreateOptions{})
		_ = unstructured.SetNestedField(cl.Object, sbName, "status", "sandbox", "name")
		_ = unstructured.SetNestedSlice(cl.Object, []any{map[string]any{"type": "Ready", "status": "True",
			// Carries the old Sandbox's time, as agent-sandbox does: never used for timing.
			"lastTransitionTime": podCreated.UTC().Format(time.RFC3339)}}, "status", "conditions")
		_, _ = claims.Update(ctx, cl, metav1.UpdateOptions{})
	}
}

// scale plays the HPA: spec.replicas follows the pool's demand while its
// ScaledObject exists (or always, when rogue): the claims held, or for an
// arrivals pool the formula on the exporter's windows.
func (c *cluster) scale(ctx context.Context, p *simPool) {
	_, soOK := c.soOf(ctx, p)
	if !(soOK && c.keda.Load()) && !c.rogue.Load() {
		return
	}
	count := func(ns string) (int64, bool) {
		l, err := c.dyn.Resource(gvr.SandboxClaim).Namespace(ns).List(ctx, metav1.ListOptions{})
		return int64(len(l.Items)), err == nil
	}
	n, ok := count(p.ns)
	if !ok {
		return
	}
	if p.follows != "" {
		for _, o := range c.pools {
			if o.name == p.follows {
				m, _ := count(o.ns)
				n += m
			}
		}
	}
	want := max(p.min, min(n, p.max))
	demand := n > 0
	if p.program != nil {
		env := map[string]float64{"arrivals_short": float64(c.arrivals(p.ns, c.shortWin)), "arrivals_long": float64(c.arrivals(p.ns, c.longWin))}
		v, err := expr.Run(p.program, env)
		if err != nil {
			return
		}
		want = max(p.min, min(int64(math.Ceil(v.(float64))), p.max))
		demand = v.(float64) > 0
	}
	if demand {
		// One off the mapping under demand (at rest the pool still shows its floor).
		want += p.offBy
	}
	if c.stuckAt > 0 {
		want = min(want, c.stuckAt)
	}
	pools := c.dyn.Resource(gvr.SandboxWarmPool).Namespace(p.ns)
	u, err := pools.Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		return
	}
	cur, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if cur == want {
		return
	}
	_ = unstructured.SetNestedField(u.Object, want, "spec", "replicas")
	_ = unstructured.SetNestedField(u.Object, want, "status", "readyReplicas")
	_, _ = pools.Update(ctx, u, metav1.UpdateOptions{})
}

// answerSAR plays RBAC as the program grants it: the exporter's ServiceAccount
// (in the stack's namespace) may get and list sandboxclaims in each pool's
// namespace, nothing else.
func (c *cluster) answerSAR(a k8stesting.Action) (bool, runtime.Object, error) {
	sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview).DeepCopy()
	if c.sarErr {
		return true, nil, apierrors.NewForbidden(authzv1.Resource("subjectaccessreviews"), "", fmt.Errorf("no permission to review"))
	}
	ra := sar.Spec.ResourceAttributes
	allowed := !c.denyAll && sar.Spec.User == "system:serviceaccount:"+c.exporterNS()+":claim-exporter" &&
		c.pool(ra.Namespace) != nil && ra.Resource == "sandboxclaims" && ra.Subresource == "" &&
		ra.Group == "extensions.agents.x-k8s.io" && (ra.Verb == "get" || ra.Verb == "list")
	if c.allowExtra[ra.Verb+" "+ra.Resource+" "+ra.Namespace] {
		allowed = true
	}
	sar.Status = authzv1.SubjectAccessReviewStatus{Allowed: allowed}
	if allowed {
		sar.Status.Reason = `RBAC: allowed by RoleBinding "claim-exporter/` + ra.Namespace + `"`
	}
	return true, sar, nil
}

// claimNames lists the claims in a namespace.
func (c *cluster) claimNames(ns string) []string {
	l, err := c.dyn.Resource(gvr.SandboxClaim).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatalf("listing claims: %v", err)
	}
	var out []string
	for _, i := range l.Items {
		out = append(out, i.GetName())
	}
	return out
}

// fakeDemand serves what the exporter would for one pool (the one in ns;
// testNS when empty): the number of claims, read from the fake API, and for an
// arrivals pool the claims created within its windows (or a fixed value / an
// error, for the reject side).
type fakeDemand struct {
	c        *cluster
	ns       string
	fixed    *int64
	err      error
	selector string
}

func (f fakeDemand) Read(ctx context.Context) (DemandReading, error) {
	if f.err != nil {
		return DemandReading{}, f.err
	}
	ns := f.ns
	if ns == "" {
		ns = testNS
	}
	d := DemandReading{Via: "fake /demand (" + ns + ")", Fresh: true, Method: "remainingItemCount", Fields: map[string]float64{}}
	if f.fixed != nil {
		d.ActiveClaims = *f.fixed
	} else {
		l, err := f.c.dyn.Resource(gvr.SandboxClaim).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: f.selector})
		if err != nil {
			return DemandReading{}, err
		}
		d.ActiveClaims = int64(len(l.Items))
	}
	d.ReadAt = time.Now().UTC().Format(time.RFC3339)
	d.Fields["active_claims"] = float64(d.ActiveClaims)
	if f.c == nil {
		return d, nil
	}
	if p := f.c.pool(ns); p != nil && p.formula != "" {
		d.Method, d.Pool = "list", p.name
		d.Fields["arrivals_short"] = float64(f.c.arrivals(ns, f.c.shortWin))
		d.Fields["arrivals_long"] = float64(f.c.arrivals(ns, f.c.longWin))
		d.Fields["arrivals_short_window_seconds"] = f.c.shortWin.Seconds()
		d.Fields["arrivals_long_window_seconds"] = f.c.longWin.Seconds()
	}
	return d, nil
}

// fakeExec answers commands from a table keyed "<pod-kind> <command>", where
// pod-kind is "sandbox" for the claimed pod and "ordinary" otherwise.
type fakeExec struct {
	answers map[string]ExecResult
	err     error // every exec fails with this
	// flaky: the first flakyFor execs fail with flaky, then the table answers.
	flaky    error
	flakyFor int32
	calls    atomic.Int32
}

func (f *fakeExec) Exec(_ context.Context, _, pod, _ string, cmd []string) ExecResult {
	n := f.calls.Add(1)
	if f.err != nil {
		return ExecResult{Err: f.err}
	}
	if f.flaky != nil && n <= f.flakyFor {
		return ExecResult{Err: f.flaky}
	}
	kind := "sandbox"
	if strings.HasPrefix(pod, "claim-exporter") {
		kind = "ordinary"
	}
	key := kind + " " + strings.Join(cmd, " ")
	if r, ok := f.answers[key]; ok {
		return r
	}
	return ExecResult{Err: fmt.Errorf("fakeExec: no answer for %q", key)}
}

// blueprintExec answers with the blueprint's printed outputs.
func blueprintExec() *fakeExec {
	ok := func(s string) ExecResult { return ExecResult{Stdout: s} }
	return &fakeExec{answers: map[string]ExecResult{
		"sandbox uname -rv":                           ok("6.18.54 #1 SMP PREEMPT_DYNAMIC Thu Oct 22 17:38:11 UTC 2026\n"),
		"sandbox cat /proc/uptime":                    ok("126.76 123.80\n"),
		"sandbox ls /sys/block":                       ok("dm-0\nvda\nvdb\nvdc\n"),
		"sandbox cat /sys/class/dmi/id/product_name":  ok("c8a.enclave\n"),
		"sandbox ip -o addr show":                     ok(bpAddr),
		"sandbox ip -4 route show default":            ok(""),
		"sandbox ip -6 route show default":            ok(""),
		requestKey("https://aws.amazon.com"):          {Stdout: "request tool: wget\n", Stderr: "wget: bad address 'aws.amazon.com'\n", ExitCode: 1},
		"ordinary uname -rv":                          ok("6.18.56 #2 SMP PREEMPT_DYNAMIC Fri Oct 30 22:32:37 UTC 2026\n"),
		"ordinary cat /proc/uptime":                   ok("14680.50 27278.87\n"),
		"ordinary ls /sys/block":                      ok("dm-0 nvme0n1 nvme1n1 nvme2n1 zram0\n"),
		"ordinary cat /sys/class/dmi/id/product_name": ok("c6a.large\n"),
	}}
}

// requestKey is fakeExec's key for the outbound request from the claimed pod.
func requestKey(url string) string { return "sandbox " + strings.Join(requestCommand(url), " ") }

// gvisorExec answers as a gVisor sandbox on the local real node does
// (REAL_NODE.md's table): its own kernel and uptime, no block device, no
// DMI tables, loopback routes listed despite the filter, no network.
func gvisorExec() *fakeExec {
	f := blueprintExec()
	f.answers["sandbox uname -rv"] = ExecResult{Stdout: "4.19.0-gvisor #1 SMP Sun Jan 10 15:06:54 PST 2016\n"}
	f.answers["sandbox cat /proc/uptime"] = ExecResult{Stdout: "3.71 3.52\n"}
	f.answers["sandbox ls /sys/block"] = ExecResult{}
	f.answers["sandbox cat /sys/class/dmi/id/product_name"] = ExecResult{Stderr: "cat: can't open '/sys/class/dmi/id/product_name': No such file or directory\n", ExitCode: 1}
	f.answers["sandbox ip -6 route show default"] = ExecResult{Stdout: "::1 dev lo metric 256\n"}
	f.answers[requestKey("https://aws.amazon.com")] = ExecResult{Stdout: "request tool: /bin/httpprobe\n",
		Stderr: `Get "https://aws.amazon.com": dial tcp: lookup aws.amazon.com on 127.0.0.1:53: read udp 127.0.0.1:43775->127.0.0.1:53: read: connection refused` + "\n", ExitCode: 1}
	return f
}

// runcExec answers as a runc pod (no isolation) does: the node's kernel and
// uptime, the node's disks, a loopback-only CNI, no network.
func runcExec() *fakeExec {
	f := blueprintExec()
	f.answers["sandbox uname -rv"] = f.answers["ordinary uname -rv"]
	f.answers["sandbox cat /proc/uptime"] = f.answers["ordinary cat /proc/uptime"]
	f.answers["sandbox ls /sys/block"] = f.answers["ordinary ls /sys/block"]
	f.answers["sandbox cat /sys/class/dmi/id/product_name"] = ExecResult{Stderr: "cat: can't open '/sys/class/dmi/id/product_name': No such file or directory\n", ExitCode: 1}
	f.answers[requestKey("https://aws.amazon.com")] = ExecResult{Stdout: "request tool: /bin/httpprobe\n",
		Stderr: "Get \"https://aws.amazon.com\": dial tcp 1.1.1.1:443: connect: network is unreachable\n", ExitCode: 1}
	return f
}

const bpAddr = `1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever preferred_lft forever
1: lo    inet6 ::1/128 scope host noprefixroute \       valid_lft forever preferred_lft forever
`

// faultWindow is the control window for a test whose verdict needs the fake to act inside it
// (a fault that moves a pool it should not, a driven pool that must rise). On a loaded machine
// (CI's node lanes beside the unit tests) the fake has been seen to act nothing for all of
// testConfig's 300 ms: the rogue's pool read flat, so the run passed where it must fail.
const faultWindow = 2 * time.Second

// testConfig is the default config with timings small enough for tests.
func testConfig() Config {
	c := defaultConfig()
	c.StackLabel = "warm-pool-autoscaling-keda.dev"
	c.StepTimeout = 3 * time.Second
	c.AdoptionTimeout = 3 * time.Second
	// Every accept run judges the claim's Ready against the bound: far above the fake's few
	// milliseconds, so a loaded machine cannot fail it; the reject case sets its own.
	c.AdoptionBound = time.Minute
	c.ExporterTimeout = time.Second
	c.HPATimeout = 3 * time.Second
	c.RestoreTimeout = 3 * time.Second
	c.Poll = 20 * time.Millisecond
	c.ControlFloor = 300 * time.Millisecond
	c.ExecTimeout = time.Second
	return c
}

// runPools runs the whole program body against the fake cluster with each
// pool's own fake exporter answer.
func runPools(t *testing.T, ctx context.Context, c *cluster, cfg Config, ex Execer) (int, *report.Report, string) {
	t.Helper()
	var buf syncBuffer
	rep := newReport(&buf)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	code := execute(ctx, stop, cfg, c.kube, c.dyn, ex, func(pt PoolTarget) DemandReader { return fakeDemand{c: c, ns: pt.Namespace} }, rep, &buf, &buf)
	return code, rep, buf.String()
}

// runWith runs the whole program body against the fake cluster.
func runWith(t *testing.T, ctx context.Context, c *cluster, cfg Config, ex Execer, d DemandReader) (int, *report.Report, string) {
	t.Helper()
	var buf syncBuffer
	rep := newReport(&buf)
	// stop cancels ctx, as the signal context's stop does in main.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	code := execute(ctx, stop, cfg, c.kube, c.dyn, ex, func(PoolTarget) DemandReader { return d }, rep, &buf, &buf)
	return code, rep, buf.String()
}

// syncBuffer is a bytes.Buffer safe for the report's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// status returns the status of the single check whose name contains sub.
func status(t *testing.T, rep *report.Report, sub string) report.Status {
	t.Helper()
	cs := rep.Find(sub)
	if len(cs) == 0 {
		t.Fatalf("no check named like %q", sub)
	}
	for _, c := range cs[1:] {
		if c.Status != cs[0].Status {
			t.Fatalf("checks named like %q disagree: %+v", sub, cs)
		}
	}
	return cs[0].Status
}

func metav1CreateOptions() metav1.CreateOptions { return metav1.CreateOptions{} }
func metav1GetOptions() metav1.GetOptions       { return metav1.GetOptions{} }
func metav1DeleteOptions() metav1.DeleteOptions { return metav1.DeleteOptions{} }
