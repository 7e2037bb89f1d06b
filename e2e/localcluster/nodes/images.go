package nodes

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// Image references the real nodes hold without a registry. The product's
// manifests name public images; the local stand-ins are imported under
// exactly those names (pulled never: IfNotPresent finds them), so nothing in
// a manifest changes for local runs: the references are contract's, which
// the program's manifests use too.
const (
	// SandboxImage stands in for the sandbox template's busybox
	// (contract.WarmPodImage): Debian's busybox-static with its applets,
	// plus /bin/httpprobe.
	SandboxImage = contract.WarmPodImage
	// TestBusyboxImage is the busybox the localcluster tests' pods use.
	TestBusyboxImage = "public.ecr.aws/docker/library/busybox:1.36"
	// ExporterGoImage stands in for the exporter's default-path image
	// (contract.ExporterGoImage): this machine's Go toolchain under
	// /usr/local/go, with the busybox above.
	ExporterGoImage = contract.ExporterGoImage
)

// imageSpec is one stand-in image: its files and its configuration.
type imageSpec struct {
	refs  []string
	files []imageFile
	cfg   v1.Config
}

type imageFile struct {
	path    string // inside the image, no leading slash
	from    string // a host file or directory (copied recursively)
	symlink string // or a symlink target
	mode    int64  // for directories made empty (from and symlink unset)
}

// nodeProgramsSource is the directory of the programs' sources: the module's
// nodeimage, beside this package.
func nodeProgramsSource() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "nodeimage")
}

// buildNodePrograms builds the small static programs the images hold.
func buildNodePrograms(ctx context.Context, outDir string) (map[string]string, error) {
	src := nodeProgramsSource()
	out := map[string]string{}
	for _, prog := range []string{"pause", "httpprobe", host.LoopbackOnlyPlugin} {
		bin := filepath.Join(outDir, prog)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
		cmd.Dir = filepath.Join(src, prog)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %w\n%s", prog, err, b)
		}
		out[prog] = bin
	}
	return out, nil
}

// busyboxFiles are busybox-static and a link for each of its applets.
func busyboxFiles() ([]imageFile, error) {
	out, err := exec.Command("/usr/bin/busybox", "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("listing busybox's applets (is busybox-static installed?): %w", err)
	}
	files := []imageFile{{path: "bin/busybox", from: "/usr/bin/busybox"}}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "bin/busybox" {
			continue
		}
		files = append(files, imageFile{path: applet, symlink: "/bin/busybox"})
	}
	return files, nil
}

func baseDirs() []imageFile {
	return []imageFile{
		{path: "tmp", mode: 0o1777}, {path: "etc", mode: 0o755}, {path: "root", mode: 0o700},
		{path: "proc", mode: 0o755}, {path: "sys", mode: 0o755}, {path: "dev", mode: 0o755},
	}
}

// nodeImages describes the stand-in images.
func nodeImages(progs map[string]string) ([]imageSpec, error) {
	bb, err := busyboxFiles()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT (the exporter's stand-in image carries the Go toolchain): %w", err)
	}
	goroot := strings.TrimSpace(string(out))
	sandboxFiles := append(append(baseDirs(), bb...), imageFile{path: "bin/httpprobe", from: progs["httpprobe"]})
	path := "PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	return []imageSpec{
		{refs: []string{procspec.PauseImage}, files: []imageFile{{path: "pause", from: progs["pause"]}},
			cfg: v1.Config{Entrypoint: []string{"/pause"}}},
		{refs: []string{SandboxImage, TestBusyboxImage}, files: sandboxFiles,
			cfg: v1.Config{Cmd: []string{"sh"}, Env: []string{path}}},
		{refs: []string{ExporterGoImage}, files: append(append([]imageFile{}, sandboxFiles...), imageFile{path: "usr/local/go", from: goroot}),
			cfg: v1.Config{Cmd: []string{"go"}, Env: []string{path, "GOTOOLCHAIN=local"}}},
	}, nil
}

// imageArchives builds (or finds, in the cache, by a hash of their inputs)
// one image archive per stand-in image and returns their paths.
// It also returns the folder of the node's own programs (the CNI plugin).
func imageArchives(ctx context.Context, progress io.Writer) (archives []string, programDir string, err error) {
	cache, err := toolcache.Dir()
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(cache, "images")
	programDir = filepath.Join(cache, "node-programs")
	for _, d := range []string{dir, programDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, "", err
		}
	}
	progs, err := buildNodePrograms(ctx, programDir)
	if err != nil {
		return nil, "", err
	}
	specs, err := nodeImages(progs)
	if err != nil {
		return nil, "", err
	}
	var paths []string
	for _, s := range specs {
		key, err := imageKey(s)
		if err != nil {
			return nil, "", err
		}
		out := filepath.Join(dir, fmt.Sprintf("%s-%s.tar", sanitize(s.refs[0]), key))
		if _, err := os.Stat(out); err != nil {
			start := time.Now()
			if err := writeImage(s, out); err != nil {
				return nil, "", fmt.Errorf("building image %s: %w", s.refs[0], err)
			}
			fmt.Fprintf(progress, "localcluster: built image %s in %s\n", strings.Join(s.refs, ", "), time.Since(start).Round(100*time.Millisecond))
		}
		paths = append(paths, out)
	}
	return paths, programDir, nil
}

// imageKey hashes what goes into an image: names, configuration, and each
// file's path, size and modification time (the Go toolchain is large; its
// VERSION and timestamps change with it).
func imageKey(s imageSpec) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q\n", s.refs, s.cfg.Entrypoint, s.cfg.Env)
	for _, f := range s.files {
		fmt.Fprintf(h, "%s %s %s %o\n", f.path, f.from, f.symlink, f.mode)
		if f.from == "" {
			continue
		}
		// A single file (busybox, the programs built at each start) by its
		// contents; a tree (the Go toolchain) by its files' sizes and times.
		if info, err := os.Stat(f.from); err == nil && info.Mode().IsRegular() {
			b, err := os.ReadFile(f.from)
			if err != nil {
				return "", err
			}
			h.Write(b)
			continue
		}
		err := filepath.WalkDir(f.from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func sanitize(ref string) string {
	return strings.NewReplacer("/", "_", ":", "_").Replace(ref)
}

// WriteImageArchive writes a one-layer image on an empty base (no registry,
// no Docker) as a docker-archive tarball naming ref: files maps a path in the
// image to a host file or directory. The archive is what ImportImage loads;
// the end-to-end tests build the exporter's ko-style image with it.
func WriteImageArchive(ref string, files map[string]string, cfg v1.Config, out string) error {
	s := imageSpec{refs: []string{ref}, cfg: cfg}
	for path, from := range files {
		s.files = append(s.files, imageFile{path: path, from: from})
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].path < s.files[j].path })
	return writeImage(s, out)
}

// writeImage writes a one-layer image as a docker-archive tarball naming
// every reference of s.
func writeImage(s imageSpec, out string) error {
	layerPath := out + ".layer"
	if err := writeLayer(s.files, layerPath); err != nil {
		return err
	}
	defer os.Remove(layerPath)
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config = s.cfg
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, r := range s.refs {
		tag, err := name.NewTag(r)
		if err != nil {
			return err
		}
		refs[tag] = img
	}
	tmp := out + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// writeLayer writes the image's files as an uncompressed tar, in a stable
// order, owned by root.
func writeLayer(files []imageFile, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	seen := map[string]bool{}
	addDirs := func(p string) error {
		var parents []string
		for d := filepath.Dir(p); d != "." && d != "/"; d = filepath.Dir(d) {
			parents = append(parents, d)
		}
		sort.Strings(parents)
		for _, d := range parents {
			if !seen[d] {
				seen[d] = true
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, file := range files {
		if err := addDirs(file.path); err != nil {
			return err
		}
		switch {
		case file.symlink != "":
			if seen[file.path] {
				continue
			}
			seen[file.path] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: file.path, Linkname: file.symlink, Mode: 0o777}); err != nil {
				return err
			}
		case file.from == "":
			seen[file.path] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: file.path + "/", Mode: file.mode}); err != nil {
				return err
			}
		default:
			if err := addTree(tw, file.from, file.path, seen); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func addTree(tw *tar.Writer, from, to string, seen map[string]bool) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		name := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if seen[name] {
			return nil
		}
		seen[name] = true
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(info.Mode().Perm())})
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
		case info.Mode().IsRegular():
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: info.Size(), Mode: int64(info.Mode().Perm()), ModTime: info.ModTime()}); err != nil {
				return err
			}
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(tw, src)
			return err
		}
		return nil
	})
}

// importImages loads the archives into node n's containerd, in the k8s.io
// namespace the CRI plugin reads, unpacked for its snapshotter.
func (k *Real) importImages(ctx context.Context, n *procspec.RealNode, archives []string) error {
	for _, a := range archives {
		cmd := exec.CommandContext(ctx, k.pl.Bins.Path("ctr"), "--address", n.ContainerdSocket(), "-n", "k8s.io",
			"images", "import", "--snapshotter", "overlayfs", "--local", a)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("importing %s into %s's containerd: %w\n%s", filepath.Base(a), n.Name, err, process.Tail(string(out), 2000))
		}
	}
	return nil
}

// ImportImage loads a docker-archive image into every real node's containerd,
// under the references it names.
func (k *Real) ImportImage(ctx context.Context, archive string) error {
	for _, n := range k.nodes {
		if err := k.importImages(ctx, n, []string{archive}); err != nil {
			return err
		}
	}
	return nil
}
