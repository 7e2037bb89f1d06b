package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/pulumirun"
)

// packagePlugin builds the warmpool package's plugin from provider/ once for a run's consumers,
// to be installed under the name and version the generated SDKs ask the engine for.
func packagePlugin(t *testing.T, work string) pulumirun.Plugin {
	file := goBuild(t, work, framework.Module+"/provider")
	root, err := framework.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "sdk", "go", "warmpool", "pulumi-plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var asked struct{ Name, Version string }
	if err := json.Unmarshal(b, &asked); err != nil || asked.Name == "" || asked.Version == "" {
		t.Fatalf("sdk/go/warmpool/pulumi-plugin.json names no plugin and version (%v): %s", err, b)
	}
	return pulumirun.Plugin{Name: asked.Name, Version: asked.Version, File: file}
}
