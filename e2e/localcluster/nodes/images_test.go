package nodes

import (
	"os"
	"path/filepath"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// The programs the node images hold are built from their sources beside this
// package: each one's directory holds its main package.
func TestNodeProgramsSourcesAreFound(t *testing.T) {
	for _, prog := range []string{"pause", "httpprobe", host.LoopbackOnlyPlugin} {
		if _, err := os.Stat(filepath.Join(nodeProgramsSource(), prog, "main.go")); err != nil {
			t.Errorf("the node image's %s: %v", prog, err)
		}
	}
}
