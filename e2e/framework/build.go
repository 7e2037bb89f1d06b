package framework

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// GoBuild builds the package pkg (an import path of this module) into dir/bin and returns the
// binary's path. It says what it compiles first: a cold build of verify takes minutes.
func GoBuild(progress io.Writer, dir, pkg string) (string, error) {
	out := filepath.Join(dir, "bin", filepath.Base(pkg))
	fmt.Fprintf(progress, "compiling %s (seconds when Go's build cache is warm, a few minutes on a first run)\n", strings.TrimPrefix(pkg, Module+"/"))
	start := time.Now()
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	fmt.Fprintf(progress, "compiled %s in %s\n", filepath.Base(pkg), time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// Module is this repository's module path.
const Module = "warmpool.local/warm-pool-autoscaling-keda"
