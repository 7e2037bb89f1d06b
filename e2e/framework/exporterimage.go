package framework

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
)

// ExporterImageUID is the user the exporter image runs as (the Deployment sets the same).
const ExporterImageUID = exporterimage.UID

// BuildExporterImage builds the exporter's image as `pulumi up` does (exporterimage.Build, for
// this machine's architecture: the local node's) and writes it as a docker-archive tarball naming ref into dir, for
// `ctr images import` on a node that pulls from no registry.
func BuildExporterImage(ctx context.Context, progress io.Writer, dir, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("exporter image reference %q: %w", ref, err)
	}
	start := time.Now()
	b, err := exporterimage.Build(ctx, "linux/"+runtime.GOARCH)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "claim-exporter-image.tar")
	if err := tarball.MultiRefWriteToFile(out, map[name.Reference]v1.Image{tag: b.Image}); err != nil {
		return "", fmt.Errorf("writing the exporter image: %w", err)
	}
	fmt.Fprintf(progress, "built exporter image %s (%s, %d KiB binary) in %s\n", ref, b.Digest, b.BinaryBytes/1024, time.Since(start).Round(100*time.Millisecond))
	return out, nil
}
