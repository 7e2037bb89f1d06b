package process

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A process that exits while it is waited for ends the wait at once, and the error carries how
// it exited and the end of its log (a test's state directory goes with the test).
func TestWaitHealthyEndsWhenTheProcessExitsQuotingItsLog(t *testing.T) {
	s := NewSet(t.TempDir(), false)
	p, err := s.Start("crasher", "/bin/sh", []string{"-c", "echo first line; echo listen tcp 127.0.0.1:1: bind: address already in use; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(time.Second) })
	began := time.Now()
	err = WaitHealthy(context.Background(), p, "http://127.0.0.1:1/never", nil, time.Minute)
	if err == nil {
		t.Fatal("the wait succeeded on a process that exited")
	}
	for _, want := range []string{"crasher exited (exit status 3)", "bind: address already in use", "first line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
	if waited := time.Since(began); waited > 30*time.Second {
		t.Errorf("the wait went on %s after the process exited", waited)
	}
}

// A server that answers 503 a few times is waited for; the answers before 200 are not success.
func TestWaitHealthyWaitsForA200(t *testing.T) {
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reads.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := WaitHealthy(context.Background(), nil, srv.URL, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 3 {
		t.Errorf("returned after %d reads, want 3 (two 503s, then 200)", n)
	}
	reads.Store(-1000)
	// 5 s: the deadline must come after at least one 503 has answered (a loaded machine has
	// taken longer than 1 s for that).
	err := WaitHealthy(context.Background(), nil, srv.URL, nil, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a server answering 503 until the deadline gave %v, want an error naming the 503", err)
	}
}

// A socket that appears later is waited for; a process that exits first ends the wait with its log.
func TestWaitListeningWaitsForTheSocketOrTheProcessExit(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	go func() {
		time.Sleep(300 * time.Millisecond)
		l, err := net.Listen("unix", sock)
		if err == nil {
			t.Cleanup(func() { l.Close() })
		}
	}()
	if err := WaitListening(context.Background(), nil, "unix", sock, 10*time.Second); err != nil {
		t.Fatalf("a socket opened after 300 ms: %v", err)
	}

	s := NewSet(t.TempDir(), false)
	p, err := s.Start("no-socket", "/bin/sh", []string{"-c", "echo cannot open the socket; exit 1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(time.Second) })
	err = WaitListening(context.Background(), p, "unix", filepath.Join(t.TempDir(), "never.sock"), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "cannot open the socket") {
		t.Errorf("a process that exited without listening gave %v, want its log's end", err)
	}
}
