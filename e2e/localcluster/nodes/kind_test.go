package nodes

import (
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
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
			kinds := Kinds(&plane.Plane{}, tc.simulated, tc.real, nil)
			nodes, handlers, loopback := 0, []string{}, false
			for _, o := range Objects(kinds, rc) {
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
