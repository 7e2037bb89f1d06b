package exporterimage

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"sync"
	"testing"
)

// forgetBuilds drops the memoized builds, so the next Build compiles again.
func forgetBuilds() { builds = sync.Map{} }

// The image is what `ko build` makes: one layer holding only a static binary, run as non-root.
func TestTheImageIsOneStaticBinaryOnAnEmptyBase(t *testing.T) {
	b, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != BinaryPath {
		t.Errorf("entrypoint %q, want [%s]", got, BinaryPath)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
	}
	files, exe := layerFiles(t, b)
	if len(files) != 2 || files[0] != "ko-app/" || files[1] != "ko-app/claim-exporter" || exe == nil {
		t.Fatalf("layer holds %q, want only ko-app/ and ko-app/claim-exporter", files)
	}
	if int64(len(exe)) != b.BinaryBytes {
		t.Errorf("binary is %d bytes in the layer, Built says %d", len(exe), b.BinaryBytes)
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		t.Fatalf("the binary is not ELF: %v", err)
	}
	if f.Machine != elf.EM_X86_64 {
		t.Errorf("the binary is for %v, want x86-64", f.Machine)
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

func layerFiles(t *testing.T, b *Built) (names []string, exe []byte) {
	t.Helper()
	layers, err := b.Image.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1 on an empty base", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, exe
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: owner %d:%d, time %v; want root's, at the epoch", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		if h.Name == "ko-app/claim-exporter" {
			if exe, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The same source builds the same digest: a second up pushes nothing new, and a reviewer can
// rebuild what runs. Each build compiles afresh (the memo forgotten) into a new directory.
func TestTheSameSourceBuildsTheSameDigest(t *testing.T) {
	forgetBuilds()
	first, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	forgetBuilds()
	second, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatal("the second build was the memoized first: the test compares nothing")
	}
	if first.Digest != second.Digest {
		t.Errorf("two builds of the same source: %s and %s", first.Digest, second.Digest)
	}
	arm, err := Build(context.Background(), "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	if arm.Digest == first.Digest {
		t.Errorf("linux/arm64's image has amd64's digest %s", arm.Digest)
	}
	if cf, _ := arm.Image.ConfigFile(); cf == nil || cf.Architecture != "arm64" {
		t.Errorf("linux/arm64's image config: %+v", cf)
	}
}

func TestBuildRefusesAPlatformItCannotBuild(t *testing.T) {
	for _, p := range []string{"", "linux", "windows/amd64", "linux/s390x", "amd64"} {
		if _, err := Build(context.Background(), p); err == nil {
			t.Errorf("Build(%q) succeeded", p)
		}
	}
}
