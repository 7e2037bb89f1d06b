package framework

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
)

// ExporterImageUID is the user the exporter image runs as (the Deployment sets the same).
const ExporterImageUID = exporterimage.UID

// BuildExporterImage builds the exporter's binary as `pulumi up` does (exporterimage.Build, for
// this machine's architecture: the local node's) and writes it, as the image's one file with the
// image's entrypoint and user, into a docker-archive tarball naming ref in dir, for `ctr images
// import` on a node that pulls from no registry. The archive is written with Docker's media types
// (localcluster.WriteImageArchive, as the node's own images are): the OCI-typed image the product
// pushes, written to an archive and imported the same way, left the reference unresolved on the
// node, and the kubelet tried to pull it.
func BuildExporterImage(ctx context.Context, progress io.Writer, dir, ref string) (string, error) {
	if _, err := name.NewTag(ref); err != nil {
		return "", fmt.Errorf("exporter image reference %q: %w", ref, err)
	}
	start := time.Now()
	b, err := exporterimage.Build(ctx, "linux/"+runtime.GOARCH)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "claim-exporter-static")
	if err := writeBinary(b.Image, bin); err != nil {
		return "", err
	}
	cf, err := b.Image.ConfigFile()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "claim-exporter-image.tar")
	if err := localcluster.WriteImageArchive(ref, map[string]string{strings.TrimPrefix(exporterimage.BinaryPath, "/"): bin}, cf.Config, out); err != nil {
		return "", fmt.Errorf("writing the exporter image: %w", err)
	}
	fmt.Fprintf(progress, "built exporter image %s (%d KiB binary) in %s\n", ref, b.BinaryBytes/1024, time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// writeBinary writes the exporter's binary, the image's one file, to path.
func writeBinary(img v1.Image, path string) error {
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return fmt.Errorf("the exporter's image has %d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("the exporter's image holds no %s", exporterimage.BinaryPath)
		}
		if err != nil {
			return err
		}
		if "/"+h.Name == exporterimage.BinaryPath {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
	}
}
