package toolcache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The gVisor shim patch must apply to the pinned module, change exactly the
// one call, and refuse a module it was not written for.
func TestShimPatchAppliesToThePinnedGVisor(t *testing.T) {
	src, err := toolsDir()
	if err != nil {
		t.Fatal(err)
	}
	var gv tool
	for _, tl := range tools() {
		if tl.dir == "gvisor" {
			gv = tl
		}
	}
	toolDir := filepath.Join(src, "gvisor")
	moduleDir, err := output(context.Background(), toolDir, "go", "mod", "download", "-json", gv.module)
	if err != nil {
		t.Fatalf("downloading %s: %v", gv.module, err)
	}
	moduleDir, err = output(context.Background(), toolDir, "go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", gv.module)
	if err != nil || moduleDir == "" {
		t.Fatalf("locating %s: %q %v", gv.module, moduleDir, err)
	}
	dst := t.TempDir()
	modfile, err := patchedModule(gv, toolDir, moduleDir, dst)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := os.ReadFile(filepath.Join(dst, "module", "pkg", "shim", "v1", "manager.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patched), "err != nil && !os.IsPermission(err)") {
		t.Fatal("the patched manager.go does not tolerate a permission error on the OOM score")
	}
	orig, _ := os.ReadFile(filepath.Join(moduleDir, "pkg", "shim", "v1", "manager.go"))
	if strings.Contains(string(orig), "!os.IsPermission(err)") {
		t.Fatal("the module cache itself was changed")
	}
	mod, _ := os.ReadFile(modfile)
	if !strings.Contains(string(mod), "replace gvisor.dev/gvisor => "+filepath.Join(dst, "module")) {
		t.Fatalf("the build's go.mod does not replace the module by the patched copy:\n%s", mod)
	}
	// Applied twice (to an already patched tree), the context no longer
	// matches: a patch that does not fit fails, it is never half-applied.
	if err := applyPatch(filepath.Join(toolDir, gv.patches[0]), filepath.Join(dst, "module")); err == nil {
		t.Fatal("the patch applied to a tree it no longer fits")
	}
}

// Build tags and patch files decide what is built, so each changes the key.
func TestBuildTagsAndPatchesChangeTheCacheKey(t *testing.T) {
	dir := t.TempDir()
	writeToolModule(t, dir, "")
	tl := tool{dir: "x", module: "example.local/x", version: "v1.0.0", commands: []command{{"example.local/x", "x"}}}
	k1, _ := cacheKey(tl, dir, "go1.26.8")
	tagged := tl
	tagged.tags = "no_btrfs"
	if k2, _ := cacheKey(tagged, dir, "go1.26.8"); k2 == k1 {
		t.Fatal("build tags do not change the cache key")
	}
	if err := os.WriteFile(filepath.Join(dir, "fix.patch"), []byte("--- a/x\n+++ b/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k3, _ := cacheKey(tl, dir, "go1.26.8"); k3 == k1 {
		t.Fatal("a patch file does not change the cache key")
	}
}
