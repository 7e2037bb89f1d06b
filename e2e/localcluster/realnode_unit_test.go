package localcluster

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
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

func TestCacheKeyOfExistingToolsIgnoresTheNewFields(t *testing.T) {
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

func TestCNIConfigStaysInTheBenchmarkingRange(t *testing.T) {
	dir := t.TempDir()
	confDir, err := writeCNIConfig(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(confDir, "10-localcluster.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"bridge": "lcbr0"`, `"ipMasq": false`, `"isGateway": false`, `"rangeStart": "198.18.3.2"`, `"gateway": "198.18.0.1"`, filepath.Join(dir, "cni", "ipam")} {
		if !strings.Contains(s, want) {
			t.Errorf("CNI config lacks %s:\n%s", want, s)
		}
	}
	for _, bad := range []string{"10.", "172.", "192.168.", "192.0.2."} {
		if strings.Contains(s, `"`+bad) {
			t.Errorf("CNI config names an address in %s:\n%s", bad, s)
		}
	}
}

// The loopback-only network (runsc, and runc for the reject run) must draw its
// addresses from the bridge's store: host-local keeps one store per network
// name and dataDir, and two stores handed a gVisor pod and the exporter the
// same pod IP.
func TestLoopbackOnlyPodsShareTheBridgesAddressStore(t *testing.T) {
	dir := t.TempDir()
	bridgeDir, err := writeCNIConfig(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	store := func(path string) (string, string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Name    string `json:"name"`
			Plugins []struct {
				IPAM struct {
					Type    string `json:"type"`
					DataDir string `json:"dataDir"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(b, &c); err != nil || len(c.Plugins) != 1 || c.Plugins[0].IPAM.Type != "host-local" {
			t.Fatalf("%s: want one plugin with host-local IPAM (%v):\n%s", path, err, b)
		}
		return c.Name, c.Plugins[0].IPAM.DataDir
	}
	bridgeName, bridgeData := store(filepath.Join(bridgeDir, "10-localcluster.conflist"))
	loName, loData := store(filepath.Join(loopbackOnlyConfDir(dir), "10-loopback-only.conflist"))
	if bridgeName != loName || bridgeData != loData {
		t.Fatalf("the bridge allocates from %s/%s, the loopback-only network from %s/%s: one address can be handed out twice", bridgeData, bridgeName, loData, loName)
	}
	t.Logf("both networks allocate from %s", filepath.Join(bridgeData, bridgeName))
}

// The ledger's undo removes what was recorded, and only that, also when the
// change never happened (a control plane killed between record and change).
func TestHostLedgerUndoesWhatItRecorded(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (it creates and removes a bridge): run it as root")
	}
	state := t.TempDir()
	l := &hostLedger{path: filepath.Join(state, hostLedgerFile)}
	const link = "lcledgertest0"
	const never = "lcledgernever0"
	if err := l.record(hostChangeLink, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "add", link, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("ip link add: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", link).Run() })
	if err := l.record(hostChangeLink, never); err != nil {
		t.Fatal(err)
	}
	if err := cleanHost(state, ""); err != nil {
		t.Fatalf("cleanHost: %v", err)
	}
	if _, err := os.Stat("/sys/class/net/" + link); err == nil {
		t.Fatalf("interface %s was recorded and is still there", link)
	}
	if _, err := os.Stat(l.path); err == nil {
		t.Fatal("the ledger is kept after a clean teardown")
	}
	if err := cleanHost(state, ""); err != nil {
		t.Fatalf("a second cleanHost: %v", err)
	}
}
