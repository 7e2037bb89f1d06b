package toolcache

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// patchedModule copies the upstream module into dst (writable: the module
// cache is read-only), applies the tool's patches to the copy, and writes a
// go.mod beside it that is the tool's own plus a replace of the module by the
// copy. It returns that go.mod, for go build -modfile (which reads the go.sum
// beside it, so the tool's go.sum is copied too).
func patchedModule(t tool, toolDir, moduleDir, dst string) (string, error) {
	src := filepath.Join(dst, "module")
	if err := copyTree(moduleDir, src); err != nil {
		return "", fmt.Errorf("copying %s: %w", moduleDir, err)
	}
	for _, p := range t.patches {
		if err := applyPatch(filepath.Join(toolDir, p), src); err != nil {
			return "", err
		}
	}
	mod, err := os.ReadFile(filepath.Join(toolDir, "go.mod"))
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(toolDir, "go.sum"))
	if err != nil {
		return "", err
	}
	mod = append(mod, fmt.Sprintf("\nreplace %s => %s\n", t.module, src)...)
	modfile := filepath.Join(dst, "go.mod")
	if err := os.WriteFile(modfile, mod, 0o644); err != nil {
		return "", err
	}
	return modfile, os.WriteFile(filepath.Join(dst, "go.sum"), sum, 0o644)
}

// applyPatch applies a unified diff with paths a/... b/... to dir. git apply
// checks every hunk's context and changes nothing when one does not match;
// GIT_CEILING_DIRECTORIES keeps it from treating an enclosing repository as
// the one to patch.
func applyPatch(patch, dir string) error {
	cmd := exec.Command("git", "apply", "-p1", "--whitespace=nowarn", patch)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s does not apply to %s (was the module's version changed without updating the patch?): %w\n%s",
			filepath.Base(patch), dir, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// copyTree copies regular files and directories (the module cache holds no
// links), making them writable.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm()|0o200)
	})
}
