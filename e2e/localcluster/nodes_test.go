package localcluster

import (
	"slices"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// The nodes' objects by kind: each kind adds its own, and the isolated
// RuntimeClass is defined once, by the kind that runs sandboxes (real nodes
// when there are any: a simulated node has no runsc).
func TestNodeObjectsFollowTheKindsAsked(t *testing.T) {
	const rc = "test-isolated"
	cases := map[string]struct {
		simulated, real int
		wantNodes       int
		wantHandler     string
		wantLoopback    bool
	}{
		"simulated only": {simulated: 3, wantNodes: 3, wantHandler: "local-simulated"},
		"real only":      {real: 1, wantHandler: procspec.RunscHandler, wantLoopback: true},
		"both":           {simulated: 2, real: 1, wantNodes: 2, wantHandler: procspec.RunscHandler, wantLoopback: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kinds := nodeKinds(&plane{}, tc.simulated, tc.real, nil)
			nodes, handlers, loopback := 0, []string{}, false
			for _, o := range nodeObjects(kinds, rc) {
				meta, _ := o["metadata"].(map[string]any)
				switch {
				case o["kind"] == "Node":
					nodes++
				case o["kind"] == "RuntimeClass" && meta["name"] == rc:
					handlers = append(handlers, o["handler"].(string))
				case o["kind"] == "RuntimeClass" && meta["name"] == LoopbackOnlyRuntimeClass:
					loopback = true
				}
			}
			if nodes != tc.wantNodes || len(handlers) != 1 || handlers[0] != tc.wantHandler || loopback != tc.wantLoopback {
				t.Fatalf("%d Node objects, RuntimeClass %s with handlers %v, loopback-only class %v; want %d, [%s], %v",
					nodes, rc, handlers, loopback, tc.wantNodes, tc.wantHandler, tc.wantLoopback)
			}
		})
	}
}

// Only what the cluster runs is built: no KWOK without simulated nodes, no
// KEDA without KEDA.
func TestNeededToolsLeaveOutWhatIsNotStarted(t *testing.T) {
	cases := map[string]struct {
		opts      Options
		want, not []string
	}{
		"simulated":         {Options{Nodes: 1}, []string{"etcd", "kubernetes", "kwok", "agent-sandbox", "keda"}, nil},
		"real only":         {Options{RealNodes: 1}, []string{"etcd", "kubernetes", "agent-sandbox", "keda"}, []string{"kwok"}},
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
