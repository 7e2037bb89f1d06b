package bursts

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// TestLiveSimulatedNodeSandboxNodePoolLimits: create mode's NodePool for the sandboxes
// (components.SandboxNodePoolSpec, what the stack applies) on the local control plane's Karpenter,
// whose KWOK provider reads the same karpenter.sh/v1 NodePool. Its limits, taint and disruption
// are the product's; only what the KWOK provider cannot satisfy is swapped (swapForKWOK).
//
// The plan: 6 sandboxes at most (a pool of maxReplicas 3 and the 3 claims that fill it, as the
// program counts the default pool) of 1 CPU and 1Gi on nodes of 4 vCPUs: 3 a node by the
// product's count (3920m allocatable), 2 nodes, limits cpu 8 and memory 64Gi. The local 4-vCPU
// types (c6a.xlarge, m6a.xlarge: 3900m after KWOK's 100m) hold 3 each too. In order:
//  1. 9 sandbox pods, with the product's node selector and toleration: Karpenter launches 2 nodes,
//     6 sandboxes run on them, and for a window longer than Karpenter's batching and several of
//     its provisioning passes, no third NodeClaim appears and the 3 others stay Pending;
//  2. beside them, a pod without the toleration that selects the same NodePool and fits in the
//     900m each node has left: it stays Pending (the taint keeps it off);
//  3. the reject: the limits the product renders for 9 sandboxes (3 nodes) patched in, Karpenter
//     launches a third node and every sandbox runs, so the window in 1 could have failed.
func TestLiveSimulatedNodeSandboxNodePoolLimits(t *testing.T) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		t.Skipf("%s=1: not starting the local control plane (this test proves nothing when skipped)", localcluster.SkipEnv)
	}
	const (
		cpus        = 4
		launchDelay = 5 * time.Second
		// Karpenter's batch window is at most 10 s and it re-runs provisioning on every pod or
		// node event, and at least every 10 s while pods are pending: 60 s holds several passes.
		holdWindow = 60 * time.Second
		sandboxCPU = int64(1000)
		sandboxMem = int64(1 << 30)
	)
	requests := map[string]string{"cpu": "1", "memory": "1Gi"}
	demand := func(sandboxes int) []components.SandboxDemand {
		return []components.SandboxDemand{{Key: "pools[0].template.resources", Sandboxes: sandboxes, MilliCPU: sandboxCPU, Memory: sandboxMem}}
	}
	plan, err := components.PlanSandboxNodes(cpus, demand(6), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, perNode := plan.Nodes, plan.Pools[0].PerNode
	if n != 2 || perNode != 3 {
		t.Fatalf("the product's plan for 6 sandboxes of %v on %d vCPUs: %d a node, %d nodes; want 3 and 2", requests, cpus, perNode, n)
	}
	spec, allowed, err := localNodePoolSpec(components.SandboxNodePoolSpec(plan), localcluster.DefaultInstanceTypes)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range allowed {
		k, err := slotsPerNode(requests, it)
		if err != nil {
			t.Fatal(err)
		}
		if k != perNode {
			t.Fatalf("the local %s holds %d sandboxes of %v, the product counts %d a node: the limit would not mean %d nodes here", it.Name, k, requests, perNode, n)
		}
	}
	total := n*perNode + perNode // one node's worth more than the limit allows
	t.Logf("the product's NodePool for 6 sandboxes of %v: %d a node, %d nodes, limits %v; the local types it allows: %s", requests, perNode, n, spec["limits"], typeNames(allowed))

	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, err := framework.StartCluster(ctx, localcluster.Options{
		StateDir: t.TempDir(), Nodes: 1, SkipWarmPoolCheck: true, Without: []string{"keda", "agent-sandbox-controller"},
		Progress:  framework.NewLogWriter(t),
		Karpenter: &localcluster.KarpenterOptions{LaunchDelay: launchDelay},
	})
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(c.Log("karpenter")); err == nil {
				t.Logf("=== last lines of karpenter ===\n%s", process.Tail(string(b), 3000))
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	t.Logf("control plane ready %.1fs after the test began", time.Since(testStart).Seconds())

	pool := contract.SandboxNodePoolName
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": components.NodePoolAPIVersion, "kind": components.NodePoolKind,
		"metadata": map[string]any{"name": pool}, "spec": spec,
	}}
	if _, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating NodePool %s: %v", pool, err)
	}
	framework.Eventually(t, ctx, "NodePool "+pool+" to be Ready (Karpenter validated it)", 60*time.Second, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Get(ctx, pool, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return localcluster.ConditionTrue(u, "Ready"), nil
	})

	ns := "sandbox-nodepool"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, ctx, "the default ServiceAccount of "+ns, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	// The sandboxes' placement as the warm pool's template gets it (WarmPoolArgs.Nodes).
	var placed corev1.PodSpec
	b, _ := json.Marshal(components.SandboxNodePlacement().PodSpecFields())
	if err := json.Unmarshal(b, &placed); err != nil {
		t.Fatal(err)
	}
	podOf := func(name string, spec corev1.PodSpec, cpu string) *corev1.Pod {
		spec.Containers = []corev1.Container{{Name: "agent", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(requests["memory"])},
		}}}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": strings.TrimRight(name, "-0123456789")}}, Spec: spec}
	}
	phase1 := time.Now()
	for i := 0; i < total; i++ {
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, podOf(fmt.Sprintf("sandbox-%d", i), *placed.DeepCopy(), requests["cpu"]), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d sandbox pods (nodeSelector %v, tolerations %v) created: %d nodes hold %d", total, placed.NodeSelector, placed.Tolerations, n, n*perNode)

	read := func(ctx context.Context) (poolRead, error) { return readPool(ctx, c, ns, pool) }
	var r poolRead
	// At least: more is the hold's to catch, with what it read.
	framework.Eventually(t, ctx, fmt.Sprintf("%d NodeClaims of %s with Ready nodes, %d sandboxes scheduled on them", n, pool, n*perNode), 2*time.Minute, func(ctx context.Context) (bool, error) {
		r, err = read(ctx)
		return err == nil && r.readyNodes >= n && len(r.scheduled) >= n*perNode, err
	})
	t.Logf("%.1fs after the pods: %s", time.Since(phase1).Seconds(), r)
	for _, node := range r.nodes {
		if !hasTaint(&node, contract.SandboxNodeTaintKey) {
			t.Errorf("node %s of %s has taints %v: want %s", node.Name, pool, node.Spec.Taints, contract.SandboxNodeTaintKey)
		}
	}

	// 2. A pod without the toleration, selecting the same NodePool, small enough for the room each
	// node has left (900m): only the taint keeps it off.
	plain := corev1.PodSpec{NodeSelector: placed.NodeSelector}
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, podOf("untolerated-0", plain, "100m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 1. The hold: no more than n NodeClaims, the excess sandboxes Pending, the untolerated pod off.
	framework.Consistently(t, ctx, fmt.Sprintf("at most %d NodeClaims of %s, %d sandboxes Pending, the untolerated pod on no node", n, pool, total-n*perNode), holdWindow,
		func(ctx context.Context) (bool, string, error) {
			r, err := read(ctx)
			if err != nil {
				return false, "", err
			}
			return len(r.claims) <= n && len(r.pending) == total-n*perNode && r.untoleratedOn == "", r.String(), nil
		})
	r, err = read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after the %s window: %s", holdWindow, r)
	t.Logf("the untolerated pod's PodScheduled: %s", r.untoleratedWhy)
	// Why Karpenter launched nothing for them: its limit, not a requirement (v1.14.1's message).
	why := lastEvent(ctx, c, ns, r.pending)
	t.Logf("the events on a Pending sandbox: %s", why)
	if !strings.Contains(why, "exceed limits for nodepool (NodePool="+pool+")") {
		t.Errorf("Karpenter gave no limit as the reason it launched nothing for the Pending sandboxes")
	}

	// 3. The reject: the limits the product renders for 9 sandboxes (3 nodes) let Karpenter launch
	// a third node for the same pods.
	raised, err := components.PlanSandboxNodes(cpus, demand(total), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	limits := components.SandboxNodePoolSpec(raised)["limits"]
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"limits": limits}})
	if _, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Patch(ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	phase3 := time.Now()
	t.Logf("limits raised to %v (the product's for %d sandboxes, %d nodes)", limits, total, raised.Nodes)
	framework.Eventually(t, ctx, fmt.Sprintf("more than %d NodeClaims of %s and all %d sandboxes scheduled, once the limit is raised", n, pool, total), 2*time.Minute, func(ctx context.Context) (bool, error) {
		r, err = read(ctx)
		return err == nil && len(r.claims) > n && r.readyNodes == len(r.claims) && len(r.scheduled) == total, err
	})
	t.Logf("%.1fs after the raise: %s", time.Since(phase3).Seconds(), r)
	if r.untoleratedOn != "" {
		t.Errorf("the untolerated pod runs on %s, a node of %s", r.untoleratedOn, pool)
	}
	t.Logf("the whole test: %.1fs", time.Since(testStart).Seconds())
}

// localNodePoolSpec is the product's NodePool spec made runnable on the local Karpenter. Two
// things are swapped, nothing else (limits, taint, disruption, expiry and the other requirements
// stay as the product renders them):
//   - nodeClassRef: the product's points at Auto Mode's NodeClass (eks.amazonaws.com), which the
//     KWOK provider does not serve; it points at the control plane's KWOKNodeClass instead;
//   - the eks.amazonaws.com/instance-* requirements (category, generation, cpu, memory in MiB):
//     Auto Mode puts those labels on its instance types, the KWOK provider does not (its own
//     karpenter.kwok.sh/instance-family is the whole "c6a", its instance-memory a quantity such
//     as "8Gi" that Gt and Lt cannot compare). They become one node.kubernetes.io/instance-type
//     In requirement: the types, of those offered, whose Auto Mode labels (read from their names
//     and sizes) meet every one of them.
//
// It returns the spec as JSON data (for the dynamic client) and the types it allows.
func localNodePoolSpec(product map[string]any, offered []localcluster.InstanceType) (map[string]any, []localcluster.InstanceType, error) {
	b, err := json.Marshal(product)
	if err != nil {
		return nil, nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, nil, err
	}
	tmpl, _, _ := unstructured.NestedMap(spec, "template", "spec")
	reqs, _ := tmpl["requirements"].([]any)
	var kept []any
	autoMode := labels.NewSelector()
	for _, r := range reqs {
		m := r.(map[string]any)
		key, op := m["key"].(string), m["operator"].(string)
		if !strings.HasPrefix(key, "eks.amazonaws.com/") {
			kept = append(kept, m)
			continue
		}
		var values []string
		for _, v := range m["values"].([]any) {
			values = append(values, v.(string))
		}
		sop, ok := map[string]selection.Operator{"In": selection.In, "NotIn": selection.NotIn, "Gt": selection.GreaterThan, "Lt": selection.LessThan, "Exists": selection.Exists, "DoesNotExist": selection.DoesNotExist}[op]
		if !ok {
			return nil, nil, fmt.Errorf("requirement %s %s: no such operator", key, op)
		}
		req, err := labels.NewRequirement(key, sop, values)
		if err != nil {
			return nil, nil, fmt.Errorf("requirement %s %s %v: %w", key, op, values, err)
		}
		autoMode = autoMode.Add(*req)
	}
	if autoMode.Empty() {
		return nil, nil, fmt.Errorf("the product's requirements name no eks.amazonaws.com label: nothing to swap (%v)", reqs)
	}
	var allowed []localcluster.InstanceType
	var names []any
	for _, it := range offered {
		l, err := autoModeLabels(it)
		if err != nil {
			return nil, nil, err
		}
		if autoMode.Matches(labels.Set(l)) {
			allowed = append(allowed, it)
			names = append(names, it.Name)
		}
	}
	if len(allowed) == 0 {
		return nil, nil, fmt.Errorf("no local instance type meets %s", autoMode)
	}
	tmpl["requirements"] = append(kept, map[string]any{"key": corev1.LabelInstanceTypeStable, "operator": "In", "values": names})
	tmpl["nodeClassRef"] = map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": localcluster.KarpenterNodeClass}
	if err := unstructured.SetNestedMap(spec, tmpl, "template", "spec"); err != nil {
		return nil, nil, err
	}
	return spec, allowed, nil
}

// awsTypeName is an AWS instance type's name: category letters, generation, attributes, size.
var awsTypeName = regexp.MustCompile(`^([a-z]+?)(\d+)[a-z-]*\.[a-z0-9]+$`)

// autoModeLabels are the eks.amazonaws.com labels Auto Mode would give an instance of the type:
// its category and generation from the name, its vCPUs and its memory in MiB.
func autoModeLabels(it localcluster.InstanceType) (map[string]string, error) {
	m := awsTypeName.FindStringSubmatch(it.Name)
	if m == nil {
		return nil, fmt.Errorf("instance type %q: not an AWS name (category, generation, size)", it.Name)
	}
	cpu, err := resource.ParseQuantity(it.CPU)
	if err != nil {
		return nil, err
	}
	mem, err := resource.ParseQuantity(it.Memory)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"eks.amazonaws.com/instance-category":   m[1],
		"eks.amazonaws.com/instance-generation": m[2],
		"eks.amazonaws.com/instance-cpu":        fmt.Sprint(cpu.Value()),
		"eks.amazonaws.com/instance-memory":     fmt.Sprint(mem.Value() >> 20),
	}, nil
}

func typeNames(types []localcluster.InstanceType) string {
	var out []string
	for _, it := range types {
		out = append(out, fmt.Sprintf("%s (%s CPU, %s)", it.Name, it.CPU, it.Memory))
	}
	return strings.Join(out, ", ")
}

// poolRead is one reading of the NodePool's NodeClaims and nodes and of the test's pods.
type poolRead struct {
	claims               []string // the NodePool's NodeClaims (deleting ones too)
	nodes                []corev1.Node
	readyNodes           int
	scheduled, pending   []string // sandbox pods with a node, without one
	untoleratedOn        string   // the node of the untolerated pod when it is one of the NodePool's
	untoleratedWhy       string   // its PodScheduled condition
	claimTypes, podNodes map[string]string
}

func (r poolRead) String() string {
	return fmt.Sprintf("NodeClaims %v (types %v), %d nodes Ready; sandboxes scheduled %d, Pending %d; untolerated pod on %q",
		r.claims, r.claimTypes, r.readyNodes, len(r.scheduled), len(r.pending), r.untoleratedOn)
}

func readPool(ctx context.Context, c *localcluster.Cluster, ns, pool string) (poolRead, error) {
	r := poolRead{claimTypes: map[string]string{}, podNodes: map[string]string{}}
	sel := metav1.ListOptions{LabelSelector: components.NodePoolLabel + "=" + pool}
	claims, err := c.Dynamic.Resource(localcluster.NodeClaimGVR).List(ctx, sel)
	if err != nil {
		return r, err
	}
	for _, u := range claims.Items {
		r.claims = append(r.claims, u.GetName())
		r.claimTypes[u.GetName()] = u.GetLabels()[corev1.LabelInstanceTypeStable]
	}
	sort.Strings(r.claims)
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		return r, err
	}
	ours := map[string]bool{}
	for _, n := range nodes.Items {
		r.nodes = append(r.nodes, n)
		ours[n.Name] = true
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				r.readyNodes++
			}
		}
	}
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return r, err
	}
	for _, p := range pods.Items {
		if p.Labels["role"] == "untolerated" {
			if ours[p.Spec.NodeName] {
				r.untoleratedOn = p.Spec.NodeName
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled {
					r.untoleratedWhy = fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
				}
			}
			continue
		}
		if p.Spec.NodeName != "" && ours[p.Spec.NodeName] {
			r.scheduled = append(r.scheduled, p.Name)
			r.podNodes[p.Name] = p.Spec.NodeName
		} else {
			r.pending = append(r.pending, p.Name)
		}
	}
	return r, nil
}

// lastEvent is Karpenter's (or the scheduler's) latest event on the first of pods, for the log.
func lastEvent(ctx context.Context, c *localcluster.Cluster, ns string, pods []string) string {
	if len(pods) == 0 {
		return "(no pod)"
	}
	ev, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pods[0]})
	if err != nil {
		return err.Error()
	}
	var says []string
	for _, e := range ev.Items {
		says = append(says, fmt.Sprintf("%s/%s: %s", e.Source.Component, e.Reason, e.Message))
	}
	return pods[0] + ": " + strings.Join(says, " | ")
}
