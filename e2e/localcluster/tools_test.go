package localcluster

import (
	"slices"
	"testing"
)

// Only what the cluster runs is built: no KWOK without simulated nodes, no
// KEDA without KEDA, a real node's tools only with real nodes; and those are
// built with the rest, before any process's spec is made.
func TestNeededToolsLeaveOutWhatIsNotStarted(t *testing.T) {
	cases := map[string]struct {
		opts      Options
		want, not []string
	}{
		"simulated":         {Options{Nodes: 1}, []string{"etcd", "kubernetes", "kwok", "agent-sandbox", "keda"}, []string{"kubernetes-node", "containerd", "gvisor", "coredns"}},
		"real only":         {Options{RealNodes: 1}, []string{"etcd", "kubernetes", "agent-sandbox", "keda", "kubernetes-node", "containerd", "gvisor", "coredns"}, []string{"kwok"}},
		"real without KEDA": {Options{RealNodes: 1, Without: []string{"keda"}}, []string{"etcd", "kubernetes", "agent-sandbox"}, []string{"kwok", "keda"}},
		"without Karpenter": {Options{Nodes: 1}, nil, []string{"karpenter"}},
		"with Karpenter":    {Options{Nodes: 1, Karpenter: &KarpenterOptions{}}, []string{"kwok", "karpenter"}, nil},
	}
	for name, tc := range cases {
		got := neededTools(tc.opts)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %v lacks %s", name, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: %v builds %s", name, got, n)
			}
		}
	}
}
