package framework

import (
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

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// ExporterImageUID is the user the exporter image runs as (the Deployment sets the same).
const ExporterImageUID = 65532

// BuildExporterImage builds the exporter's image the way `ko build` does, without Docker: a
// static binary of exporter/cmd/claim-exporter (CGO off, -trimpath) as the only file of one
// layer on an empty base, entrypoint the binary, user non-root. It writes a docker-archive
// tarball naming ref into dir and returns its path; `ctr images import` loads it, and
// `crane push` (or any registry client) would publish it.
func BuildExporterImage(ctx context.Context, progress io.Writer, dir, ref string) (string, error) {
	if _, err := name.NewTag(ref); err != nil {
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
	info, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "claim-exporter-image.tar")
	cfg := v1.Config{
		Entrypoint: []string{"/ko-app/claim-exporter"},
		User:       fmt.Sprintf("%d:%d", ExporterImageUID, ExporterImageUID),
		// No CA bundle is needed: the exporter trusts the cluster CA from its projected volume.
		Env: []string{"PATH=/ko-app"},
	}
	if err := localcluster.WriteImageArchive(ref, map[string]string{"ko-app/claim-exporter": bin}, cfg, out); err != nil {
		return "", fmt.Errorf("writing the exporter image: %w", err)
	}
	fmt.Fprintf(progress, "built exporter image %s (%d KiB binary) in %s\n", ref, info.Size()/1024, time.Since(start).Round(100*time.Millisecond))
	return out, nil
}
