package toolcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// entryOf is where t's build is kept, and whether it is there.
func entryOf(t tool, toolDir, cacheRoot, goVersion string) (entry string, built bool, err error) {
	key, err := cacheKey(t, toolDir, goVersion)
	if err != nil {
		return "", false, err
	}
	entry = filepath.Join(cacheRoot, fmt.Sprintf("%s-%s-%s", t.dir, t.version, key))
	_, err = os.Stat(filepath.Join(entry, ".complete"))
	return entry, err == nil, nil
}

// ensureTool is t's entry, built there first if it is not.
func ensureTool(ctx context.Context, t tool, toolDir, cacheRoot, goVersion string, progress io.Writer) (string, error) {
	entry, built, err := entryOf(t, toolDir, cacheRoot, goVersion)
	if err != nil || built {
		return entry, err
	}
	return buildTool(ctx, t, toolDir, entry, progress)
}

// buildTool builds t from the module toolDir pins into entry, unless whoever held entry's lock
// before built it.
func buildTool(ctx context.Context, t tool, toolDir, entry string, progress io.Writer) (string, error) {
	// One build per entry at a time: a second build (another test, `localcluster
	// build` in another shell) would otherwise wipe the first one's scratch entry.
	unlock, err := lockEntry(entry, t.dir, progress)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(entry, ".complete")); err == nil {
		return entry, nil // built by whoever held the lock
	}
	moduleDir, err := output(ctx, toolDir, "go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", t.module)
	if err == nil && moduleDir == "" {
		// The module is not downloaded yet: fetch exactly what go.sum names.
		if _, err = output(ctx, toolDir, "go", "mod", "download", t.module); err == nil {
			moduleDir, err = output(ctx, toolDir, "go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", t.module)
		}
	}
	if err != nil {
		return "", fmt.Errorf("locating %s %s: %w", t.module, t.version, err)
	}
	// Build into a scratch entry and rename at the end, so an interrupted build
	// never leaves a half-filled entry that looks complete.
	tmp := entry + ".building"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "data"), 0o755); err != nil {
		return "", err
	}
	if t.prepare != nil {
		if err := t.prepare(toolDir, moduleDir); err != nil {
			return "", fmt.Errorf("preparing %s: %w", t.dir, err)
		}
	}
	modfile := ""
	if len(t.patches) > 0 {
		if modfile, err = patchedModule(t, toolDir, moduleDir, filepath.Join(tmp, "src")); err != nil {
			return "", fmt.Errorf("patching %s: %w", t.dir, err)
		}
	}
	for _, c := range t.commands {
		if err := buildCommand(ctx, t, c, toolDir, modfile, filepath.Join(tmp, "bin", c.binary), progress); err != nil {
			return "", err
		}
	}
	// The patched copy was only needed for the build.
	_ = os.RemoveAll(filepath.Join(tmp, "src"))
	if t.data != nil {
		if err := t.data(moduleDir, filepath.Join(tmp, "data")); err != nil {
			return "", fmt.Errorf("copying run-time data of %s: %w", t.dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", err
	}
	_ = os.RemoveAll(entry)
	return entry, os.Rename(tmp, entry)
}

func buildCommand(ctx context.Context, t tool, c command, toolDir, modfile, out string, progress io.Writer) error {
	start := time.Now()
	fmt.Fprintf(progress, "building %s (%s %s)\n", c.binary, t.module, t.version)
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(progress, "building %s: %s so far\n", c.binary, time.Since(start).Round(time.Second))
			}
		}
	}()
	args := []string{"build", "-mod=readonly", "-o", out}
	if modfile != "" {
		args = append(args, "-modfile="+modfile)
	}
	if t.tags != "" {
		args = append(args, "-tags", t.tags)
	}
	if len(t.ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(t.ldflags, " "))
	}
	args = append(args, c.pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = toolDir
	// Static binaries; GOWORK off so a developer's go.work never changes what is built.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s from %s %s failed: %w\n%s", c.binary, t.module, t.version, err, process.Tail(stderr.String(), 4000))
	}
	fmt.Fprintf(progress, "built %s in %s\n", c.binary, time.Since(start).Round(time.Second))
	return nil
}

// cacheKey hashes everything that decides the build's result: the tool's
// module files, its own sources, the link flags and the Go version.
func cacheKey(t tool, toolDir, goVersion string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%q\n%q\n", t.module, t.version, goVersion, t.ldflags, t.commands)
	// Only when set, so that the keys of tools without tags stay as they were.
	if t.tags != "" {
		fmt.Fprintf(h, "tags %q\n", t.tags)
	}
	files, err := filepath.Glob(filepath.Join(toolDir, "*"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		name := filepath.Base(f)
		if name != "go.mod" && name != "go.sum" && !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".patch") {
			continue // generated files (the provider's schema) follow from these
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// lockEntry takes an exclusive lock on entry's lock file, saying so when it has
// to wait; the lock goes with the process, so a killed build never leaves it held.
func lockEntry(entry, name string, progress io.Writer) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(entry+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(progress, "waiting for another build of %s to finish (%s)\n", name, entry+".lock")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking the cache entry of %s: %w", name, err)
		}
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
