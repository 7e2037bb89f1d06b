package framework

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GoBuild builds the package pkg (an import path of the product's module) into dir/bin and
// returns the binary's path. It builds in the product's module, as a user does, not in the
// tests' own. It says what it compiles first: a cold build of verify takes minutes.
func GoBuild(progress io.Writer, dir, pkg string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out, err := filepath.Abs(filepath.Join(dir, "bin", filepath.Base(pkg)))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "compiling %s (seconds when Go's build cache is warm, a few minutes on a first run)\n", strings.TrimPrefix(pkg, Module+"/"))
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	fmt.Fprintf(progress, "compiled %s in %s\n", filepath.Base(pkg), time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// Module is the product's module path (the root go.mod's; the tests' module, e2e, and the local
// control plane's, e2e/localcluster, are modules of their own below it).
const Module = "warmpool.local/warm-pool-autoscaling-keda"
