package framework

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The exporter image is what `ko build` makes: one layer holding only a static binary, run as
// non-root, under the reference asked for.
func TestExporterImageIsOneStaticBinaryOnAnEmptyBase(t *testing.T) {
	const ref = "registry.example/team/claim-exporter:v1"
	path, err := BuildExporterImage(context.Background(), io.Discard, t.TempDir(), ref)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(ref)
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("the archive does not hold %s: %v", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/ko-app/claim-exporter" {
		t.Errorf("entrypoint %q, want [/ko-app/claim-exporter]", got)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", cf.Config.User)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1 on an empty base", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var files []string
	var exe []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, h.Name)
		if h.Name == "ko-app/claim-exporter" {
			if exe, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(files) != 2 || exe == nil {
		t.Fatalf("layer holds %q, want only ko-app/ and ko-app/claim-exporter", files)
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		t.Fatalf("the binary is not ELF: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary names a dynamic loader: it would not run on an empty base")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v dynamically", libs)
	}
}
