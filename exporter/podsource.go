package exporter

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// The exporter's own sources, so that the ClaimExporter component can ship
// them in a ConfigMap and run them in a stock golang image (no image to build
// or publish). Test files are filtered out below: embed patterns cannot
// exclude them.
//
//go:embed *.go cmd/claim-exporter/*.go
var sources embed.FS

// podGoMod is a module of its own with no requirements: the package uses the
// standard library only, so `go run` needs no download (GOPROXY=off).
const podGoMod = "module warmpool.local/warm-pool-autoscaling-keda\n\ngo 1.26\n"

// PodSource returns relative path -> content of everything needed to
// `go run ./exporter/cmd/claim-exporter` from an otherwise empty directory:
// go.mod, the exporter package's non-test .go files ("exporter/<name>.go") and
// "exporter/cmd/claim-exporter/main.go".
func PodSource() (map[string]string, error) {
	files := map[string]string{"go.mod": podGoMod}
	err := fs.WalkDir(sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") || path.Ext(p) != ".go" {
			return err
		}
		b, err := sources.ReadFile(p)
		if err != nil {
			return err
		}
		files["exporter/"+p] = string(b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}
