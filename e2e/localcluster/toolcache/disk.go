package toolcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
)

// coldBuildDiskGB is the disk a build of every tool from nothing took on a new machine (Go's
// build cache, its module cache and the tool cache, measured at their peak; docs/measurements.md,
// 2026-12-05). A machine with less free fails after half an hour of building, so the build says it
// first.
const coldBuildDiskGB = 33

// goCaches are the directories a build writes besides the tool cache: Go's build cache and its
// module cache.
func goCaches(ctx context.Context) ([]string, error) {
	out, err := output(ctx, "", "go", "env", "GOCACHE", "GOMODCACHE")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// freeBytes is what an unprivileged writer may still use on the file system holding dir (or its
// nearest existing parent).
func freeBytes(dir string) (uint64, error) {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(dir, &st)
		if err == nil {
			return uint64(st.Bavail) * uint64(st.Bsize), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, syscall.ENOENT) || parent == dir {
			return 0, fmt.Errorf("reading the free space where %s is: %w", dir, err)
		}
		dir = parent
	}
}

// diskNotice says, before missing of total tools are built, what a cold build of all of them
// took and what is free where the build writes.
func diskNotice(progress io.Writer, missing, total int, dirs []string) {
	var free []string
	for _, d := range dirs {
		n, err := freeBytes(d)
		if err != nil {
			free = append(free, err.Error())
			continue
		}
		free = append(free, fmt.Sprintf("%.1f GB free where %s is", float64(n)/1e9, d))
	}
	fmt.Fprintf(progress, "%d of %d tools to build; all of them from nothing took %d GB of disk (Go's build and module caches and the tools): %s\n",
		missing, total, coldBuildDiskGB, strings.Join(free, "; "))
}

// diskFull explains a build that failed for want of disk (its error carries the go command's
// output), and how to go on; other failures are returned as they are.
func diskFull(err error, dirs []string) error {
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		return err
	}
	return fmt.Errorf("%w\nthe disk is full: a build of every tool from nothing takes about %d GB (Go's build and module caches and the tools); free space where %s are, or point GOCACHE, GOMODCACHE and WARMPOOL_CACHE_DIR at a larger disk, and run again: the tools built so far are kept",
		err, coldBuildDiskGB, strings.Join(dirs, " and "))
}
