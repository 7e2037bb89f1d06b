package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCNIConfigStaysInTheBenchmarkingRange(t *testing.T) {
	dir := t.TempDir()
	confDir, err := WriteCNIConfig(dir, 2)
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
	bridgeDir, err := WriteCNIConfig(dir, 0)
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
	loName, loData := store(filepath.Join(LoopbackOnlyConfDir(dir), "10-loopback-only.conflist"))
	if bridgeName != loName || bridgeData != loData {
		t.Fatalf("the bridge allocates from %s/%s, the loopback-only network from %s/%s: one address can be handed out twice", bridgeData, bridgeName, loData, loName)
	}
	t.Logf("both networks allocate from %s", filepath.Join(bridgeData, bridgeName))
}
