package localcluster

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
