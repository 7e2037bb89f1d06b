package plane

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// NodesReady judges the named nodes (or all), and says which one is not Ready.
func TestNodesReadyNamesTheNodeNotReady(t *testing.T) {
	node := func(name string, status corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	}
	ctx := context.Background()
	empty := &Plane{Client: fake.NewSimpleClientset()}
	if ok, err := empty.NodesReady()(ctx); ok || err == nil || !strings.Contains(err.Error(), "no Node objects") {
		t.Errorf("no nodes: %v, %v; want not ready, no Node objects", ok, err)
	}
	c := &Plane{Client: fake.NewSimpleClientset(node("a", corev1.ConditionTrue), node("b", corev1.ConditionFalse))}
	cases := []struct {
		names  []string
		ok     bool
		naming string
	}{
		{[]string{"a"}, true, ""},
		{nil, false, "node b"},
		{[]string{"a", "b"}, false, "node b"},
		{[]string{"c"}, false, "node c"},
	}
	for _, tc := range cases {
		ok, err := c.NodesReady(tc.names...)(ctx)
		if ok != tc.ok || (tc.naming != "" && (err == nil || !strings.Contains(err.Error(), tc.naming))) {
			t.Errorf("nodesReady(%v) = %v, %v; want %v naming %q", tc.names, ok, err, tc.ok, tc.naming)
		}
	}
}
