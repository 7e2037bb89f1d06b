package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const (
	testNS       = "warm-pool-autoscaling-keda"
	testSelector = "app.kubernetes.io/part-of=warm-pool-autoscaling-keda"
	testToken    = "token-one-c2VjcmV0"
)

var partOfLabels = map[string]string{"app.kubernetes.io/part-of": "warm-pool-autoscaling-keda"}

// harnessScrapeDeadline is long so that a scrape always waits for its read:
// these tests are about what a read yields. tracker_test covers the deadline.
const harnessScrapeDeadline = time.Minute

// harness wires the exporter's real client, counters, trackers and handler to
// a fake API server, with the token in a file and the logs captured.
type harness struct {
	api       *fakeAPI
	tokenFile string
	handler   http.Handler
	logs      *syncBuffer
	client    *apiClient
	pools     []*servedPool
}

// testTimes: a scrape waits for its read, and no read is reused, so each
// scrape shows its own read. TestThreeTriggersCostOneRead covers the reuse.
func testTimes(timeout time.Duration) trackerTimes {
	return trackerTimes{readTimeout: timeout, scrapeDeadline: harnessScrapeDeadline}
}

// newHarness serves the one-pool mode: the fake's namespace and selector.
func newHarness(t *testing.T, api *fakeAPI, selector string, timeout time.Duration) *harness {
	t.Helper()
	return newPoolsHarness(t, api, []Pool{{Namespace: api.namespace, Selector: selector}}, testTimes(timeout))
}

// newPoolsHarness serves the given pools.
func newPoolsHarness(t testing.TB, api *fakeAPI, pools []Pool, times trackerTimes) *harness {
	t.Helper()
	return newConfigHarness(t, api, Config{Pools: pools}, times)
}

// newConfigHarness serves cfg's pools and refused entries from the fake API.
func newConfigHarness(t testing.TB, api *fakeAPI, cfg Config, times trackerTimes) *harness {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.APIURL, cfg.TokenFile, cfg.ReadTimeout = api.URL, tokenFile, times.readTimeout
	client, err := newAPIClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	served := servePools(context.Background(), client, cfg, times, log)
	return &harness{api: api, tokenFile: tokenFile, handler: newHandler(served, cfg.Refused), logs: logs, client: client, pools: served}
}

func (h *harness) get(t *testing.T, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// demand GETs /demand and decodes it into a map, so that an absent field is
// told apart from a zero one.
func (h *harness) demand(t *testing.T) (int, map[string]any) {
	t.Helper()
	return h.demandAt(t, "/demand")
}

// demandAt GETs path and decodes its JSON into a map.
func (h *harness) demandAt(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	code, body := h.get(t, path)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s body is not JSON: %v: %q", path, err, body)
	}
	return code, m
}

// wantCount asserts a 200 from /demand with the given count and freshness.
func (h *harness) wantCount(t *testing.T, want int, fresh bool) map[string]any {
	t.Helper()
	return h.wantCountAt(t, "/demand", want, fresh)
}

// wantCountAt asserts a 200 from path with the given count and freshness.
func (h *harness) wantCountAt(t *testing.T, path string, want int, fresh bool) map[string]any {
	t.Helper()
	code, m := h.demandAt(t, path)
	if code != http.StatusOK {
		t.Fatalf("%s status %d, want 200: %v", path, code, m)
	}
	got, ok := m["active_claims"].(float64)
	if !ok || int(got) != want || m["fresh"] != fresh {
		t.Fatalf("%s = %v, want active_claims=%d fresh=%t", path, m, want, fresh)
	}
	return m
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logLines decodes the captured JSON log lines.
func (s *syncBuffer) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(s.String())), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// staleReason asserts a stale answer with the given count and returns its
// stale_reason.
func (h *harness) staleReason(t *testing.T, count int) string {
	t.Helper()
	m := h.wantCount(t, count, false)
	r, _ := m["stale_reason"].(string)
	return r
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
