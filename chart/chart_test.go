package chart

import (
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
)

// Save writes the formats it names and refuses any other extension, writing nothing.
func TestSaveWritesPNGAndSVGOnly(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.png", "a.svg"} {
		if err := Save(plot.New(), filepath.Join(dir, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	path := filepath.Join(dir, "a.jpg")
	err := Save(plot.New(), path)
	if err == nil || err.Error() != `plot `+path+`: write .png or .svg, not ".jpg"` {
		t.Fatalf("a .jpg: got %v", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Fatalf("a refused plot left %s behind", path)
	}
}
