package bursts

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

func TestSlotsPerNodeIsTheTightestResourceAfterKarpentersOverhead(t *testing.T) {
	large := localcluster.InstanceType{Name: "c6a.large", CPU: "2", Memory: "4Gi", PricePerHour: 0.0765}
	for _, c := range []struct {
		requests map[string]string
		it       localcluster.InstanceType
		want     int
	}{
		// 1900m / 500m = 3 (a 4th would need 2000m); 4086Mi / 1Gi = 3.
		{map[string]string{"cpu": "500m", "memory": "1Gi"}, large, 3},
		// Exactly 2 CPU requested cannot fit: 100m is Karpenter's.
		{map[string]string{"cpu": "1"}, large, 1},
		{map[string]string{"cpu": "950m"}, large, 2},
		// Memory-bound: 4086Mi holds one 2Gi pod, not two.
		{map[string]string{"cpu": "100m", "memory": "2Gi"}, large, 1},
		// The pod count bounds it when requests are tiny.
		{map[string]string{"cpu": "1m"}, localcluster.InstanceType{Name: "x", CPU: "2", Memory: "4Gi", Pods: 8, PricePerHour: 1}, 8},
	} {
		got, err := slotsPerNode(c.requests, c.it)
		if err != nil || got != c.want {
			t.Errorf("slotsPerNode(%v, %s) = %d, %v; want %d", c.requests, c.it.Name, got, err, c.want)
		}
	}
	for _, bad := range []map[string]string{nil, {"cpu": "lots"}, {"nvidia.com/gpu": "1"}} {
		if _, err := slotsPerNode(bad, large); err == nil {
			t.Errorf("slotsPerNode(%v) gave no error", bad)
		}
	}
}

func nodeClaim(name, node, it string, created time.Time, deleting *time.Time) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"nodeName": node}}}
	u.SetName(name)
	u.SetLabels(map[string]string{corev1.LabelInstanceTypeStable: it})
	u.SetCreationTimestamp(metav1.NewTime(created))
	if deleting != nil {
		d := metav1.NewTime(*deleting)
		u.SetDeletionTimestamp(&d)
	}
	return u
}

func TestClaimLedgerCountsNodeSecondsFromCreationToGone(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	del := at(40)
	ready := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-a", CreationTimestamp: metav1.NewTime(at(5))},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(6))}}}}
	l := newClaimLedger()
	l.observe(at(1), []unstructured.Unstructured{nodeClaim("a", "", "c6a.large", t0, nil)}, nil)
	l.observe(at(7), []unstructured.Unstructured{nodeClaim("a", "n-a", "c6a.large", t0, nil), nodeClaim("b", "", "c6a.large", at(6), nil)}, []corev1.Node{ready})
	l.observe(at(41), []unstructured.Unstructured{nodeClaim("a", "n-a", "c6a.large", t0, &del), nodeClaim("b", "", "c6a.large", at(6), nil)}, []corev1.Node{ready})
	l.observe(at(42.5), []unstructured.Unstructured{nodeClaim("b", "", "c6a.large", at(6), nil)}, nil)

	recs := l.snapshot()
	if len(recs) != 2 || recs[0].Name != "a" || recs[1].Name != "b" {
		t.Fatalf("records %+v: want a then b", recs)
	}
	a := recs[0]
	if !a.NodeCreated.Equal(at(5)) || !a.NodeReady.Equal(at(6)) || !a.Deleting.Equal(del) || !a.Gone.Equal(at(42.5)) || a.Node != "n-a" {
		t.Errorf("a: %+v", a)
	}
	now := at(60)
	if s := a.seconds(now); s != 42.5 {
		t.Errorf("a: %v node-seconds, want 42.5 (creation to gone)", s)
	}
	if s := recs[1].seconds(now); s != 54 {
		t.Errorf("b: %v node-seconds, want 54 (creation to now: still there)", s)
	}
	table, total := costTable(recs, t0, now, 0.0765)
	if total != 96.5 || !strings.Contains(table, "total 96.5 node-seconds") || !strings.Contains(table, "(there)") {
		t.Errorf("total %v, table:\n%s", total, table)
	}
	// A failed read is not taken: the ledger only learns from reads it is given.
	if l.reads != 4 {
		t.Errorf("%d reads, want 4", l.reads)
	}
}

// The live test's premise, held without a cluster: the program renders the
// requests and do-not-disrupt into the sandbox template, and a c6a.large holds
// K=3 of them.
func TestKarpenterPoolIsTheProgramsTemplateWithItsRequests(t *testing.T) {
	_, objs, tmpl, requests, err := karpenterPool(sharedConfig(t)["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	if got := kindsOf(objs); got != "Namespace,SandboxTemplate,SandboxWarmPool" {
		t.Errorf("rendered %s: want the namespace, template and pool of a fixed pool", got)
	}
	if tmpl.Annotations[doNotDisrupt] != "true" || *tmpl.Spec.RuntimeClassName != "isolated-sandbox" {
		t.Errorf("template annotations %v, runtimeClassName %s", tmpl.Annotations, *tmpl.Spec.RuntimeClassName)
	}
	if requests["cpu"] != "500m" || requests["memory"] != "1Gi" || len(requests) != 2 {
		t.Errorf("rendered requests %v: want %v", requests, karpenterSandboxRequests)
	}
	for _, it := range localcluster.DefaultInstanceTypes {
		if it.Name != "c6a.large" {
			continue
		}
		if k, err := slotsPerNode(requests, it); k != 3 || err != nil {
			t.Errorf("a c6a.large holds %d, %v: want 3", k, err)
		}
	}
}
