package framework

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ExporterImageUID is the user the exporter image runs as (the Deployment sets the same).
const ExporterImageUID = 65532

// BuildExporterImage builds the exporter's image the way `ko build` does, without Docker: a
// static binary of exporter/cmd/claim-exporter (CGO off, -trimpath) as the only file of one
// layer on an empty base, entrypoint the binary, user non-root. It writes a docker-archive
// tarball naming ref into dir and returns its path; `ctr images import` loads it, and
// `crane push` (or any registry client) would publish it.
func BuildExporterImage(ctx context.Context, progress io.Writer, dir, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("exporter image reference %q: %w", ref, err)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	start := time.Now()
	bin := filepath.Join(dir, "claim-exporter-static")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./exporter/cmd/claim-exporter")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the exporter's static binary: %w\n%s", err, b)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(oneFileTar("ko-app/claim-exporter", exe))), nil
	})
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = v1.Config{
		Entrypoint: []string{"/ko-app/claim-exporter"},
		User:       fmt.Sprintf("%d:%d", ExporterImageUID, ExporterImageUID),
		// No CA bundle is needed: the exporter trusts the cluster CA from its projected volume.
		Env: []string{"PATH=/ko-app"},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "claim-exporter-image.tar")
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return "", err
	}
	digest, _ := img.Digest()
	fmt.Fprintf(progress, "built exporter image %s (%s, %d KiB binary) in %s\n", ref, digest, len(exe)/1024, time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// oneFileTar is a layer holding path (and its parent directories) with content, executable.
func oneFileTar(path string, content []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := filepath.Dir(path)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: 0o755, Size: int64(len(content))})
	_, _ = tw.Write(content)
	_ = tw.Close()
	return buf.Bytes()
}
