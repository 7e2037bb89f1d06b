package toolcache

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build that ran out of disk says so, with what a cold build takes and where to make room; any
// other failure is returned as it was.
func TestDiskFullSaysWhatToDo(t *testing.T) {
	dirs := []string{"/cache/go-build", "/go/pkg/mod", "/cache/warm-pool-autoscaling-keda"}
	full := errors.New("building kube-apiserver from k8s.io/kubernetes v1.36.3 failed: exit status 1\nk8s.io/api/core/v1: mkdir /tmp/go-build1/b0001/: no space left on device")
	err := diskFull(full, dirs)
	require.ErrorIs(t, err, full)
	for _, want := range []string{"the disk is full", "about 33 GB", "/cache/go-build and /go/pkg/mod and /cache/warm-pool-autoscaling-keda", "GOCACHE, GOMODCACHE and WARMPOOL_CACHE_DIR", "the tools built so far are kept"} {
		assert.Contains(t, err.Error(), want)
	}
	other := errors.New("building kwok failed: exit status 1\nundefined: foo")
	assert.Same(t, other, diskFull(other, dirs))
	assert.NoError(t, diskFull(nil, dirs))
}

// The free space is read where a directory will be, from its nearest existing parent; a path
// through a file is an error, not a figure.
func TestFreeBytesReadsTheNearestExistingParent(t *testing.T) {
	dir := t.TempDir()
	n, err := freeBytes(filepath.Join(dir, "not", "made", "yet"))
	require.NoError(t, err)
	assert.Positive(t, n)
	_, err = freeBytes("/dev/null/go-build")
	assert.ErrorContains(t, err, "reading the free space where /dev/null/go-build is")
}

// Before a cold build: how many tools, what all of them took, what is free where each cache is.
func TestDiskNoticeSaysTheNeedAndTheFreeSpace(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	diskNotice(&out, 3, 19, []string{dir, "/dev/null/x"})
	line := out.String()
	assert.True(t, strings.HasPrefix(line, "3 of 19 tools to build; all of them from nothing took 33 GB of disk"), line)
	assert.Contains(t, line, " GB free where "+dir+" is")
	assert.Contains(t, line, "reading the free space where /dev/null/x is")
}
