package bursts

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// TestLiveWarmPoolOnKarpenter: the warm pool on Karpenter's nodes (the node
// model held to Karpenter itself), on a local control plane with Karpenter's
// KWOK provider and agent-sandbox (KWOK nodes only; no KEDA: writing the SandboxWarmPool's
// spec.replicas stands in for the HPA, whose writing of it through /scale is
// proven by TestLiveRealNodeEndToEnd and BenchmarkBursts). It lives here, beside
// Render and the node model, because its pool is the program's own (Render
// runs awsprogram.Run under mocks) and the model is to be held against it.
//
// The pool's template is the program's, with the README's code-interpreter
// requests; the node pool offers one instance type, c6a.large, which holds K
// of those sandboxes. In order:
//  1. the pool of 1 on no node that fits it: Karpenter launches node A, the
//     pool is Ready only after the launch; plain pods with the same requests
//     then fill A's other K-1 slots;
//  2. scale-up to 1+3K, which fits no existing node: 3 new NodeClaims, their
//     nodes Ready after the launch delay, the pool Ready only after them;
//  3. scale-down to 2 and the fillers deleted: the pool deletes its newest
//     sandboxes, so the 2 left are A's and one on a new node X, and the other
//     new nodes are empty: consolidation removes them;
//  4. A and X each hold one warm sandbox, both fit on one node, so
//     consolidation (WhenEmptyOrUnderutilized) wants one of them gone: for a
//     window longer than consolidateAfter + Karpenter's disruption loop,
//     neither is disrupted and both sandboxes keep running (read every
//     second). Then the same with do-not-disrupt removed from X's sandbox
//     (its Sandbox's pod template, in this test only) must be consolidated,
//     within that window: the hold could have failed;
//  5. node-seconds from the NodeClaims, creation to gone.
func TestLiveWarmPoolOnKarpenter(t *testing.T) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		t.Skipf("%s=1: not starting the local control plane (this test proves nothing when skipped)", localcluster.SkipEnv)
	}
	const (
		launchDelay      = 5 * time.Second
		consolidateAfter = 5 * time.Second
		// Karpenter v1.14.1's disruption loop (pkg/controllers/disruption):
		// it looks for candidates every 10 s (pollingPeriod) and executes a
		// consolidation only after re-validating it 15 s later
		// (commandValidationDelay).
		disruptionLoop = 10*time.Second + 15*time.Second
		// The do-not-disrupt window: consolidateAfter and one whole loop, and
		// 15 s more; the break below must be consolidated within it.
		holdWindow = consolidateAfter + disruptionLoop + 15*time.Second
	)
	var itype localcluster.InstanceType
	for _, it := range localcluster.DefaultInstanceTypes {
		if it.Name == "c6a.large" {
			itype = it
		}
	}
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, err := framework.StartCluster(ctx, localcluster.Options{
		StateDir: t.TempDir(), Nodes: 1, SkipWarmPoolCheck: true, Without: []string{"keda"},
		Progress: framework.NewLogWriter(t),
		Karpenter: &localcluster.KarpenterOptions{
			LaunchDelay: launchDelay, ConsolidateAfter: consolidateAfter,
			// One type, so that the pool's nodes are of a known size (K slots).
			InstanceTypes: []localcluster.InstanceType{itype},
		},
	})
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{"karpenter", "agent-sandbox-controller", "kwok"} {
				if b, err := os.ReadFile(c.Log(name)); err == nil {
					t.Logf("=== last lines of %s ===\n%s", name, process.Tail(string(b), 3000))
				}
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	t.Logf("control plane ready %.1fs after the test began", time.Since(testStart).Seconds())

	// The program's objects for a pool of 1 with the code interpreter's requests.
	p, objs, rendered, requests, err := karpenterPool(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ns, pool := p.Namespace(), objs.Find("sandboxwarmpools").GetName()
	if rendered.Annotations[doNotDisrupt] != "true" {
		t.Fatalf("the program's template has annotations %v: want %s=true", rendered.Annotations, doNotDisrupt)
	}
	k, err := slotsPerNode(requests, itype)
	if err != nil {
		t.Fatal(err)
	}
	if k < 2 {
		t.Fatalf("K = %d: two one-sandbox nodes must fit on one for consolidation to want to move one", k)
	}
	t.Logf("the program's sandbox template: runtimeClassName %s, requests %v, %s=%s; a %s (%s CPU, %s, less Karpenter's %v) holds K=%d",
		*rendered.Spec.RuntimeClassName, requests, doNotDisrupt, rendered.Annotations[doNotDisrupt], itype.Name, itype.CPU, itype.Memory, karpenterKubeReserved, k)

	// The simulated isolated RuntimeClass selects nodes by a label: the node
	// pool's template labels give it to Karpenter's nodes; the static
	// simulated node loses it, so only the pool's nodes fit a sandbox.
	rc, err := c.Client.NodeV1().RuntimeClasses().Get(ctx, *rendered.Spec.RuntimeClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Scheduling == nil || len(rc.Scheduling.NodeSelector) == 0 {
		t.Fatalf("RuntimeClass %s has no nodeSelector: the static node cannot be kept out by it", rc.Name)
	}
	np, err := c.Dynamic.Resource(localcluster.NodePoolGVR).Get(ctx, localcluster.KarpenterNodePool, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poolLabels, _, _ := unstructured.NestedStringMap(np.Object, "spec", "template", "metadata", "labels")
	for key, v := range rc.Scheduling.NodeSelector {
		if poolLabels[key] != v {
			t.Fatalf("RuntimeClass %s selects %s=%s, which NodePool %s's template labels %v do not give its nodes", rc.Name, key, v, np.GetName(), poolLabels)
		}
	}
	static, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!karpenter.sh/nodepool"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range static.Items {
		unset := map[string]any{}
		for key := range rc.Scheduling.NodeSelector {
			unset[key] = nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": unset}})
		if _, err := c.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("RuntimeClass %s selects nodes %v: NodePool %s's template labels %v give it to Karpenter's nodes; taken off the %d static simulated node(s)",
		rc.Name, rc.Scheduling.NodeSelector, np.GetName(), poolLabels, len(static.Items))

	ledger := newClaimLedger()
	stopLedger := ledger.run(ctx, c, 500*time.Millisecond)
	defer stopLedger()

	// 1. The pool of 1: no node fits it, Karpenter launches one.
	before := ledger.seen()
	for i, o := range objs.Items {
		res := c.Dynamic.Resource(objs.GVRs[i])
		if o.GetNamespace() == "" {
			_, err = res.Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err = res.Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	step1 := time.Now()
	first := launchStep(t, ctx, c, ledger, before, step1, ns, pool, 1, 1, launchDelay)
	nodeA := first[0].Node

	fillers := newFillerNamespace(t, ctx, c)
	for i := 0; i < k-1; i++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("filler-%d", i)}, Spec: *rendered.Spec.DeepCopy()}
		if _, err := c.Client.CoreV1().Pods(fillers).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, ctx, fmt.Sprintf("%d filler pods Ready on %s", k-1, nodeA), 60*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(fillers).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods.Items {
			if podReady(&p) && p.Spec.NodeName == nodeA {
				ready++
			}
		}
		return ready == k-1, nil
	})
	t.Logf("node A (NodeClaim %s) full: its sandbox and %d plain pods with the same requests", first[0].Name, k-1)

	// 2. Scale-up to 1+3K: nothing fits the existing node.
	before = ledger.seen()
	step2 := time.Now()
	setReplicas(t, ctx, c, ns, pool, 1+3*k)
	launched := launchStep(t, ctx, c, ledger, before, step2, ns, pool, 1+3*k, 3, launchDelay)

	// 3. Scale-down to 2, fillers deleted: the newest sandboxes go.
	step3 := time.Now()
	setReplicas(t, ctx, c, ns, pool, 2)
	if err := c.Client.CoreV1().Pods(fillers).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	var held []corev1.Pod
	framework.Eventually(t, ctx, "the pool down to 2 Ready sandboxes", 60*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := sandboxPods(ctx, c, ns)
		if err != nil {
			return false, err
		}
		held = nil
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				held = append(held, p)
			}
		}
		return len(pods) == 2 && len(held) == 2 && podReady(&held[0]) && podReady(&held[1]), nil
	})
	sort.Slice(held, func(i, j int) bool { return held[i].Spec.NodeName == nodeA })
	nodeX := held[1].Spec.NodeName
	if held[0].Spec.NodeName != nodeA || nodeX == nodeA {
		t.Fatalf("the 2 sandboxes left run on %s and %s: want the oldest on %s and one on a node of the scale-up", held[0].Spec.NodeName, nodeX, nodeA)
	}
	claimOf := map[string]string{nodeA: first[0].Name}
	var emptied []claimRecord
	for _, r := range launched {
		if r.Node == nodeX {
			claimOf[nodeX] = r.Name
		} else {
			emptied = append(emptied, r)
		}
	}
	if claimOf[nodeX] == "" {
		t.Fatalf("node %s is not one the scale-up launched (%v)", nodeX, launched)
	}
	t.Logf("scale-down to 2 at %s: sandbox %s stays on A (NodeClaim %s), %s on X (NodeClaim %s); %d node(s) emptied",
		rel(step3, testStart), held[0].Name, claimOf[nodeA], held[1].Name, claimOf[nodeX], len(emptied))

	// 4. The hold: A and X each hold one warm sandbox, which both fit one
	// node: consolidation wants one gone, do-not-disrupt keeps both. Each
	// reading names the nodes by their NodeClaims.
	alias := map[string]string{nodeA: "A " + claimOf[nodeA], nodeX: "X " + claimOf[nodeX]}
	consolidatable, lastBlocked := map[string]bool{}, map[string]string{}
	emptiedInWindow := 0
	framework.Consistently(t, ctx, fmt.Sprintf("nodes %s and %s (one warm sandbox each, %d slots each) not disrupted and their sandboxes running", alias[nodeA], alias[nodeX], k), holdWindow,
		func(ctx context.Context) (bool, string, error) {
			var says []string
			for i, node := range []string{nodeA, nodeX} {
				n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					return false, "", err
				}
				claim, err := c.Dynamic.Resource(localcluster.NodeClaimGVR).Get(ctx, claimOf[node], metav1.GetOptions{})
				if err != nil {
					return false, "", err
				}
				pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, held[i].Name, metav1.GetOptions{})
				if err != nil {
					return false, "", err
				}
				// What Karpenter said when it last passed the node over. Its
				// recorder keeps one DisruptionBlocked event per object per
				// 2 minutes whatever the message (pkg/events: the dedupe key is
				// reason and UID), so an earlier reason ("nominated", "not
				// initialized") may hide the do-not-disrupt one: read, not required.
				ev, err := c.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=DisruptionBlocked,involvedObject.name=" + claimOf[node]})
				if err != nil {
					return false, "", err
				}
				for _, e := range ev.Items {
					lastBlocked[node] = e.Message
				}
				cons := localcluster.ConditionTrue(claim, "Consolidatable")
				consolidatable[node] = consolidatable[node] || cons
				disrupted := n.DeletionTimestamp != nil || claim.GetDeletionTimestamp() != nil || hasTaint(n, "karpenter.sh/disrupted")
				running := pod.UID == held[i].UID && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && podReady(pod) && pod.Spec.NodeName == node
				says = append(says, fmt.Sprintf("%s: Consolidatable=%v disrupted=%v, sandbox %s running=%v", alias[node][:1], cons, disrupted, pod.Name, running))
				if disrupted || !running {
					return false, strings.Join(says, "; "), nil
				}
			}
			gone := 0
			for _, r := range emptied {
				if cur, _ := ledger.get(r.Name); !cur.Gone.IsZero() {
					gone++
				}
			}
			emptiedInWindow = gone
			observed := fmt.Sprintf("%s; emptied nodes gone %d/%d", strings.Join(says, "; "), gone, len(emptied))
			t.Logf("%5s after the scale-down: %s", rel(time.Now(), step3), observed)
			return true, observed, nil
		})
	for _, node := range []string{nodeA, nodeX} {
		t.Logf("%s: Karpenter's last DisruptionBlocked event: %q", alias[node], lastBlocked[node])
	}
	if !consolidatable[nodeX] || !consolidatable[nodeA] {
		t.Errorf("Consolidatable seen on A: %v, on X: %v: consolidation never considered them (consolidateAfter %s)", consolidatable[nodeA], consolidatable[nodeX], consolidateAfter)
	}
	// The control: consolidation did act within the window, on an emptied node.
	if emptiedInWindow == 0 {
		t.Errorf("no emptied node was consolidated within the %s window: it shows nothing about consolidation holding off A and X", holdWindow)
	}

	// 3, read: the emptied nodes went (consolidation ran during the hold).
	framework.Eventually(t, ctx, "the emptied nodes and their NodeClaims to be gone", 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, r := range emptied {
			if cur, _ := ledger.get(r.Name); cur.Gone.IsZero() {
				return false, nil
			}
			if _, err := c.Client.CoreV1().Nodes().Get(ctx, r.Node, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
	for _, r := range emptied {
		cur, _ := ledger.get(r.Name)
		t.Logf("emptied node (NodeClaim %s): deletion %s, gone %s after the scale-down", cur.Name, rel(cur.Deleting, step3), rel(cur.Gone, step3))
	}

	// 4, broken once: the same on X without do-not-disrupt must be consolidated.
	sbName := ""
	for _, o := range held[1].OwnerReferences {
		if o.Kind == "Sandbox" {
			sbName = o.Name
		}
	}
	if sbName == "" {
		t.Fatalf("pod %s has no Sandbox owner: %v", held[1].Name, held[1].OwnerReferences)
	}
	patch := `[{"op": "remove", "path": "/spec/podTemplate/metadata/annotations/karpenter.sh~1do-not-disrupt"}]`
	if _, err := c.Dynamic.Resource(gvr.Sandbox).Namespace(ns).Patch(ctx, sbName, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing %s from Sandbox %s: %v", doNotDisrupt, sbName, err)
	}
	framework.Eventually(t, ctx, "the sandbox controller to take "+doNotDisrupt+" off pod "+held[1].Name, 30*time.Second, func(ctx context.Context) (bool, error) {
		pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, held[1].Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, has := pod.Annotations[doNotDisrupt]
		return !has, nil
	})
	unprotected := time.Now()
	t.Logf("%s off sandbox %s's pod on X (its Sandbox's pod template patched, in this test only) at %s", doNotDisrupt, held[1].Name, rel(unprotected, testStart))
	framework.Eventually(t, ctx, "node "+nodeX+" without do-not-disrupt to be consolidated", 2*holdWindow, func(ctx context.Context) (bool, error) {
		cur, _ := ledger.get(claimOf[nodeX])
		return !cur.Gone.IsZero(), nil
	})
	cur, _ := ledger.get(claimOf[nodeX])
	took := cur.Gone.Sub(unprotected)
	t.Logf("break: X (NodeClaim %s) deletion %s, gone %s after the annotation left its pod (hold window %s)", cur.Name, rel(cur.Deleting, unprotected), rel(cur.Gone, unprotected), holdWindow)
	if took > holdWindow {
		t.Errorf("the unprotected node took %s to be consolidated, more than the %s hold window: the hold proves nothing", took.Round(100*time.Millisecond), holdWindow)
	}
	framework.Eventually(t, ctx, "the pool Ready at 2 again, on "+nodeA, 60*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := sandboxPods(ctx, c, ns)
		if err != nil {
			return false, err
		}
		on := 0
		for _, p := range pods {
			if podReady(&p) && p.Spec.NodeName == nodeA {
				on++
			}
		}
		return len(pods) == 2 && on == 2, nil
	})
	if a, _ := ledger.get(claimOf[nodeA]); !a.Gone.IsZero() || !a.Deleting.IsZero() {
		t.Errorf("node %s (do-not-disrupt kept) was disrupted: %+v", nodeA, a)
	}
	t.Logf("the evicted sandbox's pod runs again on A, beside the protected one; A not disrupted")

	// 5. Cost: node-seconds read from the NodeClaims.
	stopLedger()
	now := time.Now()
	table, total := costTable(ledger.snapshot(), testStart, now, itype.PricePerHour)
	t.Logf("node-seconds from the NodeClaims (times from the test's start; node-s = creation to gone, or to now):\n%s", table)
	if total <= 0 {
		t.Errorf("no node-seconds read")
	}
	t.Logf("the whole test: %.1fs", now.Sub(testStart).Seconds())
}

// launchStep waits for the pool Ready at replicas after a write at start that
// fits no existing node, and checks what Karpenter did: at least wantClaims
// new NodeClaims (those not in before), each Node created after the launch
// delay and Ready, and the pool Ready only after the last of them. It
// returns the new NodeClaims.
func launchStep(t *testing.T, ctx context.Context, c *localcluster.Cluster, ledger *claimLedger, before map[string]bool, start time.Time, ns, pool string, replicas, wantClaims int, launchDelay time.Duration) []claimRecord {
	t.Helper()
	var poolReady time.Time
	framework.Eventually(t, ctx, fmt.Sprintf("pool %s Ready at %d", pool, replicas), 2*time.Minute, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(ns).Get(ctx, pool, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		poolReady = time.Now()
		return ready == int64(replicas), nil
	})
	var fresh []claimRecord
	framework.Eventually(t, ctx, "the new NodeClaims' nodes in the ledger", 10*time.Second, func(context.Context) (bool, error) {
		fresh = nil
		for _, r := range ledger.snapshot() {
			if !before[r.Name] {
				fresh = append(fresh, r)
			}
		}
		for _, r := range fresh {
			if r.NodeReady.IsZero() {
				return false, nil
			}
		}
		return len(fresh) >= wantClaims, nil
	})
	sec := time.Second
	for _, r := range fresh {
		// Server times are whole seconds: a second's slack on each comparison.
		if d := r.NodeCreated.Sub(r.Created); d < launchDelay-sec {
			t.Errorf("node %s created %s after its NodeClaim: before the launch delay %s", r.Node, d, launchDelay)
		}
		if poolReady.Before(r.NodeReady) {
			t.Errorf("the pool was Ready at %s, before node %s was (%s)", poolReady, r.Node, r.NodeReady)
		}
		t.Logf("NodeClaim %s (%s): created %s after the write, its node %s later, Ready %s after the write",
			r.Name, r.InstanceType, r.Created.Sub(start.Truncate(sec)), r.NodeCreated.Sub(r.Created), r.NodeReady.Sub(start.Truncate(sec)))
	}
	if d := poolReady.Sub(start); d < launchDelay {
		t.Errorf("the pool was Ready %s after the write: before any node could launch (%s)", d, launchDelay)
	}
	t.Logf("pool %s Ready at %d %.1fs after the write (launch delay %s): %d new node(s)", pool, replicas, poolReady.Sub(start).Seconds(), launchDelay, len(fresh))
	return fresh
}

// setReplicas writes the pool's spec.replicas, as the HPA would (through
// /scale; here the field itself).
func setReplicas(t *testing.T, ctx context.Context, c *localcluster.Cluster, ns, pool string, n int) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	if _, err := c.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(ns).Patch(ctx, pool, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("spec.replicas=%d on pool %s: %v", n, pool, err)
	}
	t.Logf("pool %s: spec.replicas=%d written (the HPA's part)", pool, n)
}

// sandboxPods are the pods in ns that a Sandbox owns.
func sandboxPods(ctx context.Context, c *localcluster.Cluster, ns string) ([]corev1.Pod, error) {
	l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		for _, o := range p.OwnerReferences {
			if o.Kind == "Sandbox" {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// newFillerNamespace is a namespace for the plain pods that fill a node, with
// its default ServiceAccount (pods need it to be admitted).
func newFillerNamespace(t *testing.T, ctx context.Context, c *localcluster.Cluster) string {
	t.Helper()
	n, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karpenter-fillers"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, ctx, "the default ServiceAccount of "+n.Name, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(n.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return n.Name
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Key == key {
			return true
		}
	}
	return false
}

// rel is t after t0 in seconds ("-" for the zero time).
func rel(t, t0 time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%.1fs", t.Sub(t0).Seconds())
}
