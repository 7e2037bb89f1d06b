package toolcache

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kube-state-metrics labels its build-info metric with the client-go it was built with; the link
// flag says it, so it has to follow the tool module's go.mod when the pin moves.
func TestKubeStateMetricsLinksTheClientGoItsModuleResolves(t *testing.T) {
	src, err := toolsDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "kube-state-metrics", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/client-go\s+(v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("tools/kube-state-metrics/go.mod requires no k8s.io/client-go")
	}
	if got := string(m[1]); got != kubeStateMetricsClientGo {
		t.Errorf("tools/kube-state-metrics/go.mod resolves k8s.io/client-go %s, but kubeStateMetricsClientGo is %s; change both together", got, kubeStateMetricsClientGo)
	}
	for _, tl := range tools() {
		if tl.dir == "kube-state-metrics" && !strings.Contains(strings.Join(tl.ldflags, " "), "ClientGoVersion="+kubeStateMetricsClientGo) {
			t.Errorf("kube-state-metrics's link flags %q do not set ClientGoVersion", tl.ldflags)
		}
	}
}
