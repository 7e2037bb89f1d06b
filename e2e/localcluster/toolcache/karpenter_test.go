package toolcache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Karpenter's tool: the loopback patch applies to the pinned module and binds
// both of its servers to 127.0.0.1, and its run-time data are the CRDs the
// control plane applies: NodePool, NodeClaim (with the rule admitting the
// karpenter.kwok.sh labels) and KWOKNodeClass.
func TestKarpenterToolPatchesItsBindAddressesAndCopiesItsCRDs(t *testing.T) {
	src, err := toolsDir()
	if err != nil {
		t.Fatal(err)
	}
	var kt tool
	for _, tl := range tools() {
		if tl.dir == "karpenter" {
			kt = tl
		}
	}
	toolDir := filepath.Join(src, "karpenter")
	if _, err := output(context.Background(), toolDir, "go", "mod", "download", kt.module); err != nil {
		t.Fatalf("downloading %s: %v", kt.module, err)
	}
	moduleDir, err := output(context.Background(), toolDir, "go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", kt.module)
	if err != nil || moduleDir == "" {
		t.Fatalf("locating %s: %q %v", kt.module, moduleDir, err)
	}
	dst := t.TempDir()
	if _, err := patchedModule(kt, toolDir, moduleDir, filepath.Join(dst, "src")); err != nil {
		t.Fatal(err)
	}
	op, err := os.ReadFile(filepath.Join(dst, "src", "module", "pkg", "operator", "operator.go"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(op), `fmt.Sprintf("127.0.0.1:%d"`); n != 2 || strings.Contains(string(op), `fmt.Sprintf(":%d"`) {
		t.Errorf("the patched operator.go binds %d servers to loopback and still has an all-interfaces bind: %v", n, strings.Contains(string(op), `":%d"`))
	}

	data := filepath.Join(dst, "data")
	if err := kt.data(moduleDir, data); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.kwok.sh_kwoknodeclasses.yaml"} {
		b, err := os.ReadFile(filepath.Join(data, "crds", f))
		if err != nil {
			t.Errorf("CRD %s not copied: %v", f, err)
			continue
		}
		if f != "karpenter.kwok.sh_kwoknodeclasses.yaml" && !strings.Contains(string(b), `label domain "karpenter.kwok.sh" is restricted`) {
			t.Errorf("%s is pkg/apis/crds' (no rule for the karpenter.kwok.sh labels), want kwok/charts/crds'", f)
		}
	}
}
