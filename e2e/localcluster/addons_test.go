package localcluster

import (
	"slices"
	"testing"
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
		pl := &plane{realNodes: tc.realNodes, without: map[string]bool{}, pki: &pki{dir: "/state/pki"}}
		for _, w := range tc.without {
			pl.without[w] = true
		}
		var got, crds []string
		for _, a := range pl.addons() {
			got = append(got, a.name)
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
