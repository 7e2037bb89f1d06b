package addons

import (
	"slices"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
)

// The add-ons run are the list less Options.Without, in start order, with the
// cluster DNS only where pods resolve names (real nodes).
func TestAddonsFollowTheNodesAndWithout(t *testing.T) {
	cases := map[string]struct {
		realNodes int
		without   []string
		want      []string
	}{
		"simulated":                {want: []string{"agent-sandbox-controller", "keda"}},
		"real":                     {realNodes: 1, want: []string{"agent-sandbox-controller", "cluster DNS", "keda"}},
		"real without KEDA":        {realNodes: 1, without: []string{"keda"}, want: []string{"agent-sandbox-controller", "cluster DNS"}},
		"without agent-sandbox":    {without: []string{"agent-sandbox-controller"}, want: []string{"keda"}},
		"without both, real nodes": {realNodes: 1, without: []string{"agent-sandbox-controller", "keda"}, want: []string{"cluster DNS"}},
	}
	for name, tc := range cases {
		pl := &plane.Plane{RealNodes: tc.realNodes, Without: map[string]bool{}, PKI: pki.New("/state/pki")}
		for _, w := range tc.without {
			pl.Without[w] = true
		}
		var got, crds []string
		for _, a := range List(pl, nil) {
			got = append(got, a.Name)
			if a.crdTool != "" {
				crds = append(crds, a.crdTool)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: add-ons %v, want %v", name, got, tc.want)
		}
		if slices.Contains(tc.without, "keda") == slices.Contains(crds, "keda") {
			t.Errorf("%s: CRDs from %v with Without %v: KEDA's CRDs go with KEDA", name, crds, tc.without)
		}
	}
}

// With Options.Karpenter, Karpenter is the last add-on: its CRDs from its
// tool, its process on the chosen ports, and its node class and pool (applied
// once the CRDs are Established) with the launch delay and consolidation asked.
func TestKarpenterAddonWhenAsked(t *testing.T) {
	k, err := KarpenterOptions{LaunchDelay: 5 * time.Second}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	pl := &plane.Plane{StateDir: "/state", Without: map[string]bool{}, PKI: pki.New("/state/pki")}
	pl.Ports.KarpenterMetrics, pl.Ports.KarpenterHealth = 21, 22
	as := List(pl, &k)
	last := as[len(as)-1]
	if last.Name != "karpenter" || last.crdTool != "karpenter" || len(last.Processes) != 1 || last.Processes[0].Name != "karpenter" || last.ready == nil {
		t.Fatalf("last add-on %+v", last)
	}
	if args := last.Processes[0].Args(); !slices.Contains(args, "--health-probe-port=22") || !slices.Contains(args, "--metrics-port=21") {
		t.Errorf("karpenter's ports %v", args)
	}
	crs := CustomResources(as)
	if len(crs) != 2 || crs[0]["kind"] != "KWOKNodeClass" || crs[1]["kind"] != "NodePool" {
		t.Fatalf("custom resources %v", crs)
	}
	if d := crs[0]["spec"].(map[string]any)["nodeRegistrationDelay"]; d != "5s" {
		t.Errorf("launch delay %v, want 5s", d)
	}
	if d := crs[1]["spec"].(map[string]any)["disruption"].(map[string]any)["consolidateAfter"]; d != "30s" {
		t.Errorf("consolidateAfter %v, want the default 30s", d)
	}

	as = List(pl, nil)
	for _, a := range as {
		if a.Name == "karpenter" {
			t.Error("Karpenter runs without Options.Karpenter")
		}
	}
	if len(CustomResources(as)) != 0 {
		t.Error("custom resources without Karpenter")
	}
}
