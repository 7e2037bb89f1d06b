// Package toolcache builds the upstream programs the local control plane and
// the Pulumi runs use (etcd, Kubernetes, KWOK, agent-sandbox, KEDA, Karpenter,
// containerd, gVisor, CoreDNS, the Pulumi CLI and its Kubernetes provider, Prometheus,
// kube-state-metrics, and kubectl for the demo's closing commands) from the Go
// module proxy, each from its own pinned module under tools/, and keeps them
// in a cache outside the repository. It knows nothing of a running cluster:
// pulumirun uses it without a control plane.
package toolcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/livetests"
)

// Binaries says where each built program and its run-time data are.
type Binaries struct {
	paths map[string]string // binary name -> path
	data  map[string]string // tool dir -> data dir
}

// At is Binaries for programs at the given paths (binary name -> path), built
// elsewhere: for tests of code that only reads the paths.
func At(paths map[string]string) *Binaries {
	return &Binaries{paths: paths, data: map[string]string{}}
}

// Path returns the path of a built binary (e.g. "kube-apiserver", "pulumi"),
// or "" when it was not built (also on a nil Binaries).
func (b *Binaries) Path(binary string) string {
	if b == nil {
		return ""
	}
	return b.paths[binary]
}

// DataDir returns the run-time data a tool's build copied out of its module
// (e.g. DataDir("keda")/crds).
func (b *Binaries) DataDir(toolDir string) string { return b.data[toolDir] }

// Dir is where built tools are kept: outside the repository, so a fresh
// clone (CI) reuses them, keyed so that a changed pin never reuses a stale build.
func Dir() (string, error) {
	if d := os.Getenv("WARMPOOL_CACHE_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set WARMPOOL_CACHE_DIR): %w", err)
	}
	return filepath.Join(base, "warm-pool-autoscaling-keda"), nil
}

// toolsDir is the tools/ folder beside this file. Builds run from the source
// tree (go test and go run both keep file paths), which is what lets the
// committed go.mod/go.sum of each tool drive its build.
func toolsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the toolcache source folder")
	}
	d := filepath.Join(filepath.Dir(file), "tools")
	if _, err := os.Stat(filepath.Join(d, "kubernetes", "go.mod")); err != nil {
		return "", fmt.Errorf("tool modules not found beside the toolcache source (%s): run from a source checkout: %w", d, err)
	}
	return d, nil
}

// buildsAtOnce: see Ensure.
const buildsAtOnce = 2

// Ensure builds the named tools (all when none is named) that are not
// in the cache yet and returns where they are. A cached build is never
// rebuilt; progress of a cold build is written to progress every 30 seconds.
func Ensure(ctx context.Context, progress io.Writer, only ...string) (*Binaries, error) {
	if err := livetests.Refuse("build or find the upstream tools " + strings.Join(only, ", ")); err != nil {
		return nil, err
	}
	cache, err := Dir()
	if err != nil {
		return nil, err
	}
	src, err := toolsDir()
	if err != nil {
		return nil, err
	}
	goVersion, err := output(ctx, "", "go", "env", "GOVERSION")
	if err != nil {
		return nil, fmt.Errorf("the go command is needed to build the local control plane's tools: %w", err)
	}
	bins := &Binaries{paths: map[string]string{}, data: map[string]string{}}
	want := map[string]bool{}
	for _, o := range only {
		want[o] = true
	}
	var selected []tool
	for _, t := range tools() {
		if len(only) > 0 && !want[t.dir] {
			continue
		}
		delete(want, t.dir)
		selected = append(selected, t)
	}
	for unknown := range want {
		return nil, fmt.Errorf("no tool named %q", unknown)
	}
	// Each entry is found once (its key hashes the tool's module files); only the missing build.
	entries, built := make([]string, len(selected)), make([]bool, len(selected))
	missing := 0
	for i, t := range selected {
		if entries[i], built[i], err = entryOf(t, filepath.Join(src, t.dir), filepath.Join(cache, "tools"), goVersion); err != nil {
			return nil, err
		}
		if !built[i] {
			missing++
		}
	}
	var dirs []string // where a build writes: said before a cold build, and when the disk fills
	if missing > 0 {
		if dirs, err = goCaches(ctx); err != nil {
			return nil, err
		}
		dirs = append(dirs, cache)
		diskNotice(progress, missing, len(selected), dirs)
	}
	// buildsAtOnce tools build at a time, started in list order: one go build keeps about 1.4 of
	// 2 cores busy (links and the largest packages compile on one core), a second fills the rest.
	// Each entry has its own lock, and the Go build cache takes concurrent builds.
	progress = &lockedWriter{w: progress} // both builds report progress
	errs := make([]error, len(selected))
	slots := make(chan struct{}, buildsAtOnce)
	var wg sync.WaitGroup
	for i, t := range selected {
		if built[i] {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			_, err := buildTool(ctx, t, filepath.Join(src, t.dir), entries[i], progress)
			errs[i] = diskFull(err, dirs)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, t := range selected {
		for _, c := range t.commands {
			bins.paths[c.binary] = filepath.Join(entries[i], "bin", c.binary)
		}
		bins.data[t.dir] = filepath.Join(entries[i], "data")
	}
	return bins, nil
}

// lockedWriter lets several goroutines write whole lines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
