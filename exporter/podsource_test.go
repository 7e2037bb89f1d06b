package exporter

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// PodSource holds exactly go.mod, this package's non-test sources and the
// command, under the paths the ClaimExporter component mounts them at.
func TestPodSourceFileSet(t *testing.T) {
	files, err := PodSource()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"exporter/cmd/claim-exporter/main.go", "go.mod"}
	onDisk, _ := filepath.Glob("*.go")
	for _, f := range onDisk {
		if !strings.HasSuffix(f, "_test.go") {
			want = append(want, "exporter/"+f)
		}
	}
	var got []string
	for p := range files {
		got = append(got, p)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("PodSource paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if files["go.mod"] != "module warmpool.local/warm-pool-autoscaling-keda\n\ngo 1.26\n" {
		t.Errorf("go.mod = %q", files["go.mod"])
	}
	for p, content := range files {
		if onDisk, err := os.ReadFile(strings.TrimPrefix(p, "exporter/")); p != "go.mod" && (err != nil || string(onDisk) != content) {
			t.Errorf("%s differs from the file on disk (err %v)", p, err)
		}
	}
}

// What the pod does: PodSource written to an empty directory builds with no
// module download (GOPROXY=off), and the binary serves a count from an API
// server given by flags, then two pools (one with arrivals) from
// EXPORTER_POOLS, answers /healthz, and exits cleanly on SIGTERM.
func TestPodSourceBuildsAndRunsStandalone(t *testing.T) {
	files, err := PodSource()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "claim-exporter")
	build := exec.Command("go", "build", "-o", bin, "./exporter/cmd/claim-exporter")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("stand-alone build failed: %v\n%s", err, out)
	}

	api := newFakeAPI(t, testNS)
	// The fake's clock stands still (its Date header and the claims' creation times): the
	// claims stay inside the 30 s short window however long the two binaries take to start.
	api.setClock(time.Now())
	api.addClaims("claim", 3, partOfLabels)
	api.addClaimsIn("agents-code", "claim", 2, nil, time.Time{})
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(testToken), 0o600)

	// The one-pool mode, from flags.
	base, stop, logs := startBinary(t, bin, nil, "--api-url", api.URL, "--token-file", tokenFile, "--ca-file", "",
		"--namespace", testNS, "--selector", testSelector)
	code, d, err := freshDemand(base + "/demand")
	if err != nil || code != 200 || d.ActiveClaims != 3 || !d.Fresh || d.Selector != testSelector || d.Namespace != testNS {
		t.Fatalf("/demand = %d %+v (%v)\n%s", code, d, err, logs.String())
	}
	stop()

	// Two pools from EXPORTER_POOLS, one with arrival windows.
	pools := `[{"name": "code", "namespace": "agents-code", "arrivalWindowsSeconds": [30, 180]},` +
		`{"name": "default", "namespace": "` + testNS + `", "selector": "` + testSelector + `"}]`
	base, stop, logs = startBinary(t, bin, []string{"EXPORTER_POOLS=" + pools}, "--api-url", api.URL, "--token-file", tokenFile, "--ca-file", "")
	for path, want := range map[string]int64{"/demand/code": 2, "/demand/default": 3} {
		code, d, err := freshDemand(base + path)
		if err != nil || code != 200 || d.ActiveClaims != want || !d.Fresh || (path == "/demand/code") != (d.ArrivalsShort != nil && *d.ArrivalsShort == 2) {
			t.Errorf("%s = %d %+v (%v)\n%s", path, code, d, err, logs.String())
		}
	}
	if resp, err := http.Get(base + "/demand"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("/demand with two pools: %v %v, want 404", resp, err)
	}
	stop()
}

// freshDemand GETs url until it answers 200 with a fresh count, for at most 30 s, and returns
// the last answer: the binary's first read must end within its 2 s scrape deadline to be
// served fresh, and a loaded machine has taken longer; a later scrape serves it.
func freshDemand(url string) (int, DemandResponse, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var d DemandResponse
		resp, err := http.Get(url)
		if err != nil {
			return 0, d, err
		}
		err = json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		if (err == nil && resp.StatusCode == 200 && d.Fresh) || time.Now().After(deadline) {
			return resp.StatusCode, d, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startBinary runs the built exporter on a free port with args (and env added
// to the test's), waits for /healthz, and returns its URL and a stop that
// sends SIGTERM and checks it exits cleanly with no token in its log.
func startBinary(t *testing.T, bin string, env []string, args ...string) (string, func(), *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append(args, "--listen", addr)...)
	cmd.Env = append(os.Environ(), env...)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})

	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("binary never answered /healthz: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop := func() {
		t.Helper()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("binary did not exit after SIGTERM")
		}
		if strings.Contains(logs.String(), testToken) {
			t.Errorf("the token appears in the binary's log:\n%s", logs.String())
		}
	}
	return base, stop, logs
}
