package toolcache

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func writeToolModule(t *testing.T, dir, sum string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.local/tool\n\ngo 1.26.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCacheKeyFollowsTheInputsOfTheBuild(t *testing.T) {
	dir := t.TempDir()
	writeToolModule(t, dir, "a v1.0.0 h1:x\n")
	tl := tool{dir: "x", module: "example.local/x", version: "v1.0.0", commands: []command{{"example.local/x", "x"}}}
	k1, err := cacheKey(tl, dir, "go1.26.8")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := cacheKey(tl, dir, "go1.26.8"); again != k1 {
		t.Fatalf("same inputs gave keys %s and %s", k1, again)
	}
	// Generated files (the provider's schema) must not change the key.
	if err := os.WriteFile(filepath.Join(dir, "schema-embed.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if same, _ := cacheKey(tl, dir, "go1.26.8"); same != k1 {
		t.Fatalf("a generated file changed the key")
	}
	changes := map[string]func() (string, error){
		"go.sum": func() (string, error) {
			writeToolModule(t, dir, "a v1.0.1 h1:y\n")
			defer writeToolModule(t, dir, "a v1.0.0 h1:x\n")
			return cacheKey(tl, dir, "go1.26.8")
		},
		"Go version": func() (string, error) { return cacheKey(tl, dir, "go1.27.0") },
		"ldflags": func() (string, error) {
			l := tl
			l.ldflags = []string{"-X a.b=c"}
			return cacheKey(l, dir, "go1.26.8")
		},
		"a source file": func() (string, error) {
			p := filepath.Join(dir, "main.go")
			if err := os.WriteFile(p, []byte("package main\n"), 0o644); err != nil {
				return "", err
			}
			defer os.Remove(p)
			return cacheKey(tl, dir, "go1.26.8")
		},
	}
	for what, change := range changes {
		k, err := change()
		if err != nil {
			t.Fatal(err)
		}
		if k == k1 {
			t.Errorf("changing the %s kept cache key %s: a stale build would be reused", what, k)
		}
	}
}

func TestACachedToolIsNeverRebuilt(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	writeToolModule(t, src, "")
	// A module that cannot be built: reaching the build step fails loudly.
	tl := tool{dir: "x", module: "example.local/does-not-exist", version: "v0.0.1", commands: []command{{"example.local/does-not-exist", "x"}}}
	ctx := context.Background()
	if _, err := ensureTool(ctx, tl, src, cache, "go1.26.8", io.Discard); err == nil {
		t.Fatal("a tool with no cache entry was not built (the bogus build did not fail)")
	}
	key, _ := cacheKey(tl, src, "go1.26.8")
	entry := filepath.Join(cache, "x-v0.0.1-"+key)
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ensureTool(ctx, tl, src, cache, "go1.26.8", io.Discard)
	if err != nil {
		t.Fatalf("a complete cache entry was not reused: %v", err)
	}
	if got != entry {
		t.Fatalf("got entry %s, want %s", got, entry)
	}
}

// safeBuffer is a bytes.Buffer two goroutines may use.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestASecondBuildWaitsForTheFirstAndReusesItsEntry(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	writeToolModule(t, src, "")
	// A module that cannot be built: if the waiting build builds, it fails.
	tl := tool{dir: "x", module: "example.local/does-not-exist", version: "v0.0.1", commands: []command{{"example.local/does-not-exist", "x"}}}
	key, _ := cacheKey(tl, src, "go1.26.8")
	entry := filepath.Join(cache, "x-v0.0.1-"+key)
	unlock, err := lockEntry(entry, "x", io.Discard) // the first build
	if err != nil {
		t.Fatal(err)
	}
	var progress safeBuffer
	type result struct {
		entry string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		e, err := ensureTool(context.Background(), tl, src, cache, "go1.26.8", &progress)
		done <- result{e, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(progress.String(), "waiting for another build of x") {
		if time.Now().After(deadline) {
			t.Fatalf("the second build did not wait for the first; its progress: %q", progress.String())
		}
		select {
		case r := <-done:
			t.Fatalf("the second build ran while the first held the entry: %+v", r)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The first build completes its entry and lets go.
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock()
	r := <-done
	if r.err != nil || r.entry != entry {
		t.Fatalf("after waiting, the second build did not reuse the first's entry: entry %q, err %v", r.entry, r.err)
	}
}
