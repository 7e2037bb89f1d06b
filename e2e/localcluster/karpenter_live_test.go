package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// TestLiveKarpenter: a control plane with one simulated node and Karpenter
// (its KWOK cloud provider). A pod that fits no existing node (it selects the
// node pool's nodes) makes Karpenter create a NodeClaim of the cheapest
// instance type that fits; after the launch delay the Node appears, KWOK makes
// it Ready, Karpenter registers and initializes it, and the pod runs there.
// Karpenter listens on loopback only, and killed and restarted by its record
// it goes on: deleted, the pod leaves the node empty, and consolidation
// removes it.
func TestLiveKarpenter(t *testing.T) {
	const launchDelay = 5 * time.Second
	c := startCluster(t, Options{
		Nodes: 1, SkipWarmPoolCheck: true, Without: []string{"agent-sandbox-controller", "keda"},
		Karpenter: &KarpenterOptions{LaunchDelay: launchDelay, ConsolidateAfter: 10 * time.Second},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	for _, o := range []struct {
		res  string
		name string
	}{{"KWOKNodeClass", KarpenterNodeClass}, {"NodePool", KarpenterNodePool}} {
		gvr := KWOKNodeClassGVR
		if o.res == "NodePool" {
			gvr = NodePoolGVR
		}
		u, err := c.Dynamic.Resource(gvr).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", o.res, o.name, err)
		}
		if !ConditionTrue(u, "Ready") {
			t.Fatalf("%s %s not Ready: %v", o.res, o.name, u.Object["status"])
		}
	}

	ns := newNamespace(t, c, "karpenter")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "needs-a-node"},
		Spec: corev1.PodSpec{
			// The simulated node has room, but not this label: only a node of
			// the pool fits.
			NodeSelector: map[string]string{"karpenter.sh/nodepool": KarpenterNodePool},
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
				}},
			}},
		},
	}
	created, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := created.CreationTimestamp.Time

	var claim *unstructured.Unstructured
	waitUntil(t, ctx, "a NodeClaim of pool "+KarpenterNodePool, 60*time.Second, func(ctx context.Context) (bool, error) {
		l, err := c.Dynamic.Resource(NodeClaimGVR).List(ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=" + KarpenterNodePool})
		if err != nil {
			return false, err
		}
		if len(l.Items) > 0 {
			claim = &l.Items[0]
		}
		return claim != nil, nil
	})
	claimAt := claim.GetCreationTimestamp().Time
	t.Logf("NodeClaim %s %s after the pod (Karpenter's batch window: 1 s idle, 10 s at most)", claim.GetName(), claimAt.Sub(start))

	var nodeName string
	waitUntil(t, ctx, "NodeClaim "+claim.GetName()+" to be Initialized with its node", 90*time.Second, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(NodeClaimGVR).Get(ctx, claim.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		claim = u
		nodeName, _, _ = unstructured.NestedString(u.Object, "status", "nodeName")
		return nodeName != "" && ConditionTrue(u, "Launched") && ConditionTrue(u, "Registered") && ConditionTrue(u, "Initialized"), nil
	})
	node, err := c.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == "karpenter.sh/unregistered" {
			t.Errorf("node %s still has Karpenter's unregistered taint", node.Name)
		}
	}
	if !ready || node.Annotations["kwok.x-k8s.io/node"] != "fake" || node.Labels["karpenter.sh/nodepool"] != KarpenterNodePool {
		t.Fatalf("node %s: Ready %v, annotations %v, labels %v: want a Ready KWOK node of the pool", node.Name, ready, node.Annotations, node.Labels)
	}
	// The cheapest type that fits 1 CPU and 1Gi beside Karpenter's overhead.
	if it := node.Labels["node.kubernetes.io/instance-type"]; it != "c6a.large" {
		t.Errorf("instance type %s, want c6a.large (the cheapest that fits)", it)
	}
	if d := node.CreationTimestamp.Time.Sub(claimAt); d < launchDelay-time.Second {
		t.Errorf("the Node came %s after its NodeClaim, before the launch delay %s", d, launchDelay)
	}
	t.Logf("node %s (%s) created %s after its NodeClaim (launch delay %s), Initialized %s after the pod",
		node.Name, node.Labels["node.kubernetes.io/instance-type"], node.CreationTimestamp.Time.Sub(claimAt), launchDelay, time.Since(start).Round(100*time.Millisecond))

	waitUntil(t, ctx, "the pod to be Ready on "+nodeName, 60*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				if p.Spec.NodeName != nodeName {
					return false, poll.Stop(fmt.Errorf("the pod runs on %s, not on the launched %s", p.Spec.NodeName, nodeName))
				}
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("pod Ready on %s %s after it was created", nodeName, time.Since(start).Round(100*time.Millisecond))

	// Its servers listen on loopback only (the tool's loopback-bind.patch).
	health := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.plane.Ports.KarpenterHealth))
	if conn, err := net.DialTimeout("tcp", health, time.Second); err != nil {
		t.Errorf("Karpenter's health port on loopback: %v", err)
	} else {
		conn.Close()
	}
	addrs, _ := net.InterfaceAddrs()
	var others []string
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
			continue
		}
		others = append(others, ip.IP.String())
		for _, port := range []int{c.plane.Ports.KarpenterHealth, c.plane.Ports.KarpenterMetrics} {
			if conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), strconv.Itoa(port)), time.Second); err == nil {
				conn.Close()
				t.Errorf("Karpenter answers on %s:%d: it must listen on loopback only", ip.IP, port)
			}
		}
	}

	t.Logf("Karpenter's health and metrics ports answer on loopback, not on %v", others)

	// Killed and restarted by its record, Karpenter picks up its NodeClaim
	// (the consolidation below is the restarted one's).
	if err := c.Kill("karpenter"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart("karpenter"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "the restarted Karpenter's /readyz", 90*time.Second, func(ctx context.Context) (bool, error) {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})

	// Empty, the node goes: consolidation (WhenEmptyOrUnderutilized, after
	// ConsolidateAfter) deletes the NodeClaim and Karpenter's termination the Node.
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	emptied := time.Now()
	waitUntil(t, ctx, "the emptied node "+nodeName+" and its NodeClaim to be removed", 120*time.Second, func(ctx context.Context) (bool, error) {
		_, errClaim := c.Dynamic.Resource(NodeClaimGVR).Get(ctx, claim.GetName(), metav1.GetOptions{})
		_, errNode := c.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return apierrors.IsNotFound(errClaim) && apierrors.IsNotFound(errNode), nil
	})
	t.Logf("node %s and NodeClaim %s removed %s after the pod's deletion (consolidateAfter 10s)", nodeName, claim.GetName(), time.Since(emptied).Round(100*time.Millisecond))
}
