package localcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
)

// A tool is one upstream program (or several from one module) that the local
// control plane runs. Each has its own small Go module under tools/<dir>, whose
// committed go.sum fixes every dependency, so a build is reproducible from the
// Go module proxy alone.
type tool struct {
	dir      string // folder under tools/
	module   string // the upstream module the binaries come from
	version  string
	commands []command
	ldflags  []string
	// prepare writes generated inputs into the tool's folder before the build.
	prepare func(toolDir, moduleDir string) error
	// data copies files the programs need at run time (CRDs, stages) out of
	// the upstream module into the cache entry.
	data func(moduleDir, dataDir string) error
	// tags are the build tags (go build -tags).
	tags string
	// patches are files in the tool's folder, unified diffs (-p1) applied to a
	// scratch copy of the upstream module, which the build then uses through a
	// replace directive in a copy of go.mod: the committed go.mod stays as it is
	// and the module cache is never written.
	patches []string
}

type command struct {
	pkg    string // package to build, "." for the tool module's own main
	binary string
}

const (
	// The pins live in contract.Pins, beside the program's, with why they differ.
	kubernetesVersion = contract.KubernetesModule
	kedaVersion       = contract.KedaModule
	agentSandboxVer   = contract.AgentSandboxModule
	pulumiVersion     = contract.PulumiModule
	// The real nodes' runtime pins are the local control plane's alone.
	containerdVersion = "v2.4.2"
	// gvisorVersion is what the module proxy resolved gvisor.dev/gvisor@latest
	// to (gVisor tags no Go module releases; its "go" branch is the module).
	gvisorVersion = "v0.0.0-20260905035102-160fafc42237"
	// ProviderVersion is the version the Kubernetes provider reports, and the
	// one the Pulumi program's SDK (pulumi-kubernetes/sdk/v4 v4.32.0) asks for.
	ProviderVersion = contract.PulumiKubernetesProvider
)

// Without a version, clients cannot parse the server's and refuse it; the
// node's binaries get the same, so the kubelet reports v1.36.3.
var kubernetesLdflags = []string{
	"-X k8s.io/component-base/version.gitVersion=" + kubernetesVersion,
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=36",
	"-X k8s.io/component-base/version.gitTreeState=clean",
}

func tools() []tool {
	return []tool{
		{
			dir: "etcd", module: "go.etcd.io/etcd/server/v3", version: contract.EtcdModule,
			commands: []command{{"go.etcd.io/etcd/server/v3", "etcd"}},
		},
		{
			dir: "kubernetes", module: "k8s.io/kubernetes", version: kubernetesVersion,
			commands: []command{
				{"k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"},
				{"k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"},
				{"k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"},
			},
			ldflags: kubernetesLdflags,
		},
		{
			dir: "kwok", module: "sigs.k8s.io/kwok", version: contract.KwokModule,
			commands: []command{{"sigs.k8s.io/kwok/cmd/kwok", "kwok"}},
			data:     copyKwokStages,
		},
		{
			dir: "agent-sandbox", module: "sigs.k8s.io/agent-sandbox", version: agentSandboxVer,
			commands: []command{{"sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller", "agent-sandbox-controller"}},
			data:     copyGlob("k8s/crds/*.yaml", "crds"),
		},
		{
			dir: "keda", module: "github.com/kedacore/keda/v2", version: kedaVersion,
			commands: []command{
				{"github.com/kedacore/keda/v2/cmd/operator", "keda-operator"},
				{"github.com/kedacore/keda/v2/cmd/adapter", "keda-adapter"},
			},
			ldflags: []string{"-X github.com/kedacore/keda/v2/version.Version=" + strings.TrimPrefix(kedaVersion, "v")},
			data:    copyGlob("config/crd/bases/*.yaml", "crds"),
		},
		{
			dir: "kubernetes-node", module: "k8s.io/kubernetes", version: kubernetesVersion,
			commands: []command{
				{"k8s.io/kubernetes/cmd/kubelet", "kubelet"},
				{"k8s.io/kubernetes/cmd/kube-proxy", "kube-proxy"},
			},
			ldflags: kubernetesLdflags,
		},
		{
			dir: "containerd", module: "github.com/containerd/containerd/v2", version: containerdVersion,
			commands: []command{
				{"github.com/containerd/containerd/v2/cmd/containerd", "containerd"},
				{"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2", "containerd-shim-runc-v2"},
				{"github.com/containerd/containerd/v2/cmd/ctr", "ctr"},
			},
			// The snapshotters that need cgo or kernel headers are left out;
			// overlayfs and native remain.
			tags:    "no_btrfs no_devmapper no_zfs",
			ldflags: []string{"-X github.com/containerd/containerd/v2/version.Version=" + containerdVersion},
		},
		{
			dir: "gvisor", module: "gvisor.dev/gvisor", version: gvisorVersion,
			commands: []command{
				{"gvisor.dev/gvisor/runsc", "runsc"},
				{"gvisor.dev/gvisor/shim", "containerd-shim-runsc-v1"},
			},
			patches: []string{"shim-oom-score-permission.patch"},
		},
		{
			dir: "pulumi", module: "github.com/pulumi/pulumi/pkg/v3", version: pulumiVersion,
			commands: []command{{"github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", "pulumi"}},
			ldflags:  []string{"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=" + pulumiVersion},
		},
		{
			dir: "pulumi-kubernetes", module: "github.com/pulumi/pulumi-kubernetes/provider/v4",
			version:  "v4.0.0-20260115033456-f47bc2d6f199",
			commands: []command{{".", "pulumi-resource-kubernetes"}},
			ldflags:  []string{"-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=" + ProviderVersion},
			prepare:  writeProviderSchema,
		},
	}
}

// Binaries says where each built program and its run-time data are.
type Binaries struct {
	paths map[string]string // binary name -> path
	data  map[string]string // tool dir -> data dir
}

// Path returns the path of a built binary (e.g. "kube-apiserver", "pulumi").
func (b *Binaries) Path(binary string) string { return b.paths[binary] }

// DataDir returns the run-time data a tool's build copied out of its module
// (e.g. DataDir("keda")/crds).
func (b *Binaries) DataDir(toolDir string) string { return b.data[toolDir] }

// CacheDir is where built tools are kept: outside the repository, so a fresh
// clone (CI) reuses them, keyed so that a changed pin never reuses a stale build.
func CacheDir() (string, error) {
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
		return "", errors.New("cannot locate the localcluster source folder")
	}
	d := filepath.Join(filepath.Dir(file), "tools")
	if _, err := os.Stat(filepath.Join(d, "kubernetes", "go.mod")); err != nil {
		return "", fmt.Errorf("tool modules not found beside the localcluster source (%s): run from a source checkout: %w", d, err)
	}
	return d, nil
}

// ControlPlaneTools are the tools Start runs; PulumiTools are the Pulumi CLI
// and the Kubernetes provider, which only the Pulumi runs need.
var (
	ControlPlaneTools = []string{"etcd", "kubernetes", "kwok", "agent-sandbox", "keda"}
	// NodeTools are what a real node runs (Options.RealNodes).
	NodeTools   = []string{"kubernetes-node", "containerd", "gvisor"}
	PulumiTools = []string{"pulumi", "pulumi-kubernetes"}
)

// EnsureBinaries builds the named tools (all when none is named) that are not
// in the cache yet and returns where they are. A cached build is never
// rebuilt; progress of a cold build is written to progress every 30 seconds.
func EnsureBinaries(ctx context.Context, progress io.Writer, only ...string) (*Binaries, error) {
	cache, err := CacheDir()
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
	for _, t := range tools() {
		if len(only) > 0 && !want[t.dir] {
			continue
		}
		delete(want, t.dir)
		dir, err := ensureTool(ctx, t, filepath.Join(src, t.dir), filepath.Join(cache, "tools"), goVersion, progress)
		if err != nil {
			return nil, err
		}
		for _, c := range t.commands {
			bins.paths[c.binary] = filepath.Join(dir, "bin", c.binary)
		}
		bins.data[t.dir] = filepath.Join(dir, "data")
	}
	for unknown := range want {
		return nil, fmt.Errorf("no tool named %q", unknown)
	}
	return bins, nil
}

func ensureTool(ctx context.Context, t tool, toolDir, cacheRoot, goVersion string, progress io.Writer) (string, error) {
	key, err := cacheKey(t, toolDir, goVersion)
	if err != nil {
		return "", err
	}
	entry := filepath.Join(cacheRoot, fmt.Sprintf("%s-%s-%s", t.dir, t.version, key))
	if _, err := os.Stat(filepath.Join(entry, ".complete")); err == nil {
		return entry, nil
	}
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
		return fmt.Errorf("building %s from %s %s failed: %w\n%s", c.binary, t.module, t.version, err, tail(stderr.String(), 4000))
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

// writeProviderSchema does what the provider's generate.go does at release
// time: stamp the version into schema.json and compact both JSON files into
// the names its main package embeds.
func writeProviderSchema(toolDir, moduleDir string) error {
	cmdDir := filepath.Join(moduleDir, "cmd", "pulumi-resource-kubernetes")
	var schema map[string]any
	if err := readJSON(filepath.Join(cmdDir, "schema.json"), &schema); err != nil {
		return err
	}
	schema["version"] = ProviderVersion
	var mapping any
	if err := readJSON(filepath.Join(cmdDir, "terraform-mapping.json"), &mapping); err != nil {
		return err
	}
	for name, v := range map[string]any{"schema-embed.json": schema, "terraform-mapping-embed.json": mapping} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(toolDir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// copyKwokStages gathers the stages of KWOK's "fast" bundle (node
// initialisation, heartbeat with lease, pod ready/complete/delete) into one
// file: the kwok binary has no built-in stages.
func copyKwokStages(moduleDir, dataDir string) error {
	var all bytes.Buffer
	for _, pattern := range []string{"node/fast/*.yaml", "node/heartbeat-with-lease/*.yaml", "pod/fast/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(moduleDir, "kustomize", "stage", pattern))
		if err != nil {
			return err
		}
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			all.WriteString("---\n")
			all.Write(b)
			all.WriteString("\n")
		}
	}
	if all.Len() == 0 {
		return errors.New("no KWOK stages found in the module")
	}
	return os.WriteFile(filepath.Join(dataDir, "kwok-stages.yaml"), all.Bytes(), 0o644)
}

func copyGlob(pattern, into string) func(moduleDir, dataDir string) error {
	return func(moduleDir, dataDir string) error {
		files, err := filepath.Glob(filepath.Join(moduleDir, pattern))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no files match %s in %s", pattern, moduleDir)
		}
		if err := os.MkdirAll(filepath.Join(dataDir, into), 0o755); err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dataDir, into, filepath.Base(f)), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
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

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
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
