// Package exporterimage builds the claim exporter's container image the way `ko build` does (no
// Dockerfile, no daemon: one static binary as the only file of one layer on an empty base, run as
// a non-root user) and publishes it to a registry by digest. `pulumi up` runs it, so production
// pods pull a binary instead of compiling one.
package exporterimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"warmpool.local/warm-pool-autoscaling-keda/exporter"
)

// UID is the user (and group) the image runs as: distroless's nonroot, as ko's default base.
const UID = 65532

// BinaryPath is the exporter's path in the image, ko's layout (/ko-app/<command>).
const BinaryPath = "/ko-app/claim-exporter"

// DefaultPlatform is the platform an image is built for unless the stack names another: the
// architecture of Auto Mode's built-in general-purpose nodes.
const DefaultPlatform = "linux/amd64"

// Platforms the exporter's image can be built for (the exporter is pure Go: CGO off).
var Platforms = []string{"linux/amd64", "linux/arm64"}

// Built is one build's image and what it took.
type Built struct {
	Image    v1.Image
	Digest   v1.Hash
	Platform string
	// BinaryBytes is the size of the static binary, the image's only file.
	BinaryBytes int64
}

// builds memoizes Build per platform: the source is embedded in this binary, so a platform's image
// is the same for the life of the process (a preview and an up in one process build once).
var builds sync.Map // platform -> *buildOnce

type buildOnce struct {
	once  sync.Once
	built *Built
	err   error
}

// Build compiles the exporter's embedded source (exporter.PodSource: the code reviewed is the code
// that runs) with the Go toolchain on PATH for platform ("linux/amd64" or "linux/arm64") and
// returns its image. Reproducible: the same source and toolchain give the same digest (-trimpath,
// no VCS stamp, every timestamp zero, files owned by root, one fixed layer order).
func Build(ctx context.Context, platform string) (*Built, error) {
	if !ValidPlatform(platform) {
		return nil, fmt.Errorf("exporter image platform %q: must be one of %s", platform, strings.Join(Platforms, ", "))
	}
	v, _ := builds.LoadOrStore(platform, &buildOnce{})
	b := v.(*buildOnce)
	b.once.Do(func() { b.built, b.err = build(ctx, platform) })
	return b.built, b.err
}

// ValidPlatform says whether p is one of Platforms.
func ValidPlatform(p string) bool { return slices.Contains(Platforms, p) }

func build(ctx context.Context, platform string) (*Built, error) {
	goos, goarch, _ := strings.Cut(platform, "/")
	dir, err := os.MkdirTemp("", "claim-exporter-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	source, err := exporter.PodSource()
	if err != nil {
		return nil, err
	}
	for rel, content := range source {
		path := filepath.Join(dir, "src", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	bin := filepath.Join(dir, "claim-exporter")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, "./exporter/cmd/claim-exporter")
	cmd.Dir = filepath.Join(dir, "src")
	// The user's GOFLAGS (a -mod=vendor, a tag) would change what is built; the module needs no
	// download (the exporter imports only the standard library).
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, lookErr := exec.LookPath("go"); lookErr != nil {
			return nil, fmt.Errorf("building the exporter's image needs the Go toolchain on PATH (the one this Pulumi program runs with): %w", lookErr)
		}
		return nil, fmt.Errorf("building the exporter's static binary for %s: %w\n%s", platform, err, out)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	img, err := imageOf(binary, goos, goarch)
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Built{Image: img, Digest: digest, Platform: platform, BinaryBytes: int64(len(binary))}, nil
}

// imageOf is the OCI image holding binary at BinaryPath, and nothing else.
func imageOf(binary []byte, goos, goarch string) (v1.Image, error) {
	layerTar, err := layerOf(binary)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = goos, goarch
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		// No CA bundle: the exporter trusts the cluster CA from its projected volume.
		Env: []string{"PATH=" + filepath.Dir(BinaryPath)},
	}
	// History is left empty: a created-by line would only repeat the layer.
	cf.History = nil
	return mutate.ConfigFile(img, cf)
}

// layerOf is the layer's tar: the binary's directory and the binary, root-owned, timestamps zero.
func layerOf(binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	dir := strings.TrimPrefix(filepath.Dir(BinaryPath), "/") + "/"
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(BinaryPath, "/"), Mode: 0o555, Size: int64(len(binary)), ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
