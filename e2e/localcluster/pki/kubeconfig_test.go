package pki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kubeconfig is written where a client reads it, its directory made when
// missing (kube-proxy's directory is new when its kubeconfig is written), and
// names the server it is given.
func TestWriteKubeconfigMakesItsDirectory(t *testing.T) {
	p := New(filepath.Join(t.TempDir(), "pki"))
	if err := p.Generate(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kube-proxy", "kubeconfig")
	if err := WriteKubeconfig(p, "https://127.0.0.1:6443", path, "admin"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "server: https://127.0.0.1:6443\n") {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}
