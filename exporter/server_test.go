package exporter

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every kind of API fault serves the last good count marked stale, never 0,
// logs one line with the reason, and recovers on the next good read.
func TestAPIFaultsServeLastGoodCountStale(t *testing.T) {
	faults := map[string]struct {
		answer func(w http.ResponseWriter, r *http.Request)
		reason string // expected in stale_reason and the log line
	}{
		"500": {func(w http.ResponseWriter, _ *http.Request) {
			writeStatus(w, http.StatusInternalServerError, "InternalError", "etcdserver: leader changed")
		}, "500"},
		"403": {func(w http.ResponseWriter, _ *http.Request) {
			writeStatus(w, http.StatusForbidden, "Forbidden", `sandboxclaims.extensions.agents.x-k8s.io is forbidden: User "system:serviceaccount:warm-pool-autoscaling-keda:claim-exporter" cannot list resource "sandboxclaims"`)
		}, "forbidden"},
		"timeout": {func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // hang until the exporter's read bound gives up
		}, "deadline exceeded"},
		"garbage body": {func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("\x00\x17garbage{{"))
		}, "decode list response"},
		"truncated body": {func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"kind":"PartialObjectMetadataList","metadata":{},"items":[{"metadata":{"name":"a"}},`))
		}, "decode list response"},
		"empty object": {func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{}`))
		}, "not with a list"},
		"redirect": {func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound) // a proxy in the way; never followed
		}, "302"},
		"html page": {func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
		}, "decode list response"},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", 3, partOfLabels)
			// Every read the test expects to complete gets a minute; only the hang is cut short,
			// by a 300 ms bound set while no read is in flight (the good read has ended, and the
			// recovery read starts after the bound is back).
			h := newHarness(t, api, "", time.Minute)
			good := h.wantCount(t, 3, true)
			if name == "timeout" {
				h.pools[0].tracker.readTimeout = 300 * time.Millisecond
			}

			api.setFault(func(w http.ResponseWriter, r *http.Request, _ int) bool {
				fault.answer(w, r)
				return true
			})
			for range 2 {
				m := h.wantCount(t, 3, false)
				if m["read_at"] != good["read_at"] || m["method"] != good["method"] {
					t.Errorf("stale answer %v does not carry the good read's read_at/method %v", m, good)
				}
				if r, _ := m["stale_reason"].(string); !strings.Contains(strings.ToLower(r), fault.reason) {
					t.Errorf("stale_reason = %q, want it to contain %q", r, fault.reason)
				}
			}
			code, metrics := h.get(t, "/metrics")
			if code != http.StatusOK || !strings.Contains(metrics, "\nwarmpool_active_claims{pool=\"\",namespace=\""+testNS+"\"} 3\n") ||
				!strings.Contains(metrics, "\nwarmpool_active_claims_fresh{pool=\"\",namespace=\""+testNS+"\"} 0\n") {
				t.Errorf("/metrics during the fault = %d:\n%s", code, metrics)
			}

			var warns []map[string]any
			for _, l := range h.logs.logLines(t) {
				if l["level"] == "WARN" {
					warns = append(warns, l)
				}
			}
			if len(warns) != 3 { // two /demand scrapes and one /metrics scrape
				t.Errorf("%d WARN lines for 3 failed reads, want one each:\n%s", len(warns), h.logs.String())
			}
			for _, l := range warns {
				if r, _ := l["reason"].(string); !strings.Contains(strings.ToLower(r), fault.reason) {
					t.Errorf("log reason = %q, want it to contain %q", r, fault.reason)
				}
				if msg, _ := l["msg"].(string); !strings.Contains(msg, "stale") || l["last_count"] != 3.0 {
					t.Errorf("log line %v does not say the last good count (3) is served stale", l)
				}
			}
			if strings.Contains(h.logs.String(), testToken) {
				t.Errorf("the token appears in the log:\n%s", h.logs.String())
			}

			api.setFault(nil)
			h.pools[0].tracker.readTimeout = time.Minute
			h.wantCount(t, 3, true)
		})
	}
}

// Before the first successful read there is no count: /demand and /metrics
// answer 503 and carry no value KEDA could read as 0.
func TestNoCountBeforeFirstReadIsAnError(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 2, nil)
	api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "the server is currently unable to handle the request")
		return true
	})
	h := newHarness(t, api, "", time.Minute)

	code, m := h.demand(t)
	if code != http.StatusServiceUnavailable {
		t.Errorf("/demand status %d, want 503", code)
	}
	if _, ok := m["active_claims"]; ok {
		t.Errorf("/demand carries active_claims before any read: %v", m)
	}
	if e, _ := m["error"].(string); !strings.Contains(e, "no successful read") {
		t.Errorf("/demand error = %q", e)
	}
	code, body := h.get(t, "/metrics")
	if code != http.StatusServiceUnavailable || strings.Contains(body, "warmpool_active_claims{") {
		t.Errorf("/metrics = %d %q, want 503 without a value", code, body)
	}
	if logs := h.logs.logLines(t); len(logs) != 2 || !strings.Contains(logs[0]["msg"].(string), "no count yet") {
		t.Errorf("want one WARN line per failed read saying there is no count yet:\n%s", h.logs.String())
	}
	if strings.Contains(body+h.logs.String(), testToken) {
		t.Error("the token leaked into a response or the log")
	}

	api.setFault(nil)
	h.wantCount(t, 2, true)
}

// /healthz answers while the API is down and never sends it a request.
func TestHealthzNeverCallsTheAPI(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		writeStatus(w, http.StatusInternalServerError, "InternalError", "down")
		return true
	})
	h := newHarness(t, api, "", time.Minute)
	for range 3 {
		if code, body := h.get(t, "/healthz"); code != http.StatusOK || body != "ok" {
			t.Errorf("/healthz = %d %q, want 200 ok", code, body)
		}
	}
	if n := len(api.recorded()); n != 0 {
		t.Errorf("/healthz made %d API requests, want 0", n)
	}
}

// The Prometheus text is what KEDA's `format: prometheus` and any scraper
// parse: one family per line group, the count under its contract name.
func TestMetricsText(t *testing.T) {
	api := newFakeAPI(t, `ns-"quoted"`) // not a valid namespace, but shows the escaping
	api.addClaims("claim", 3, nil)
	h := newHarness(t, api, "", time.Minute)
	code, body := h.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics status %d", code)
	}
	for _, want := range []string{
		"# TYPE warmpool_active_claims gauge\nwarmpool_active_claims{pool=\"\",namespace=\"ns-\\\"quoted\\\"\"} 3\n",
		"# TYPE warmpool_active_claims_fresh gauge\nwarmpool_active_claims_fresh{pool=\"\",namespace=\"ns-\\\"quoted\\\"\"} 1\n",
		"# TYPE warmpool_active_claims_read_failures_total counter\nwarmpool_active_claims_read_failures_total{pool=\"\",namespace=\"ns-\\\"quoted\\\"\"} 0\n",
		"warmpool_active_claims_read_timestamp_seconds{pool=\"\",namespace=\"ns-\\\"quoted\\\"\"} 1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

// Scrapes that arrive while a read is in flight wait for it and share its
// result instead of each sending the API its own list.
func TestConcurrentScrapesShareOneRead(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	count := func(ctx context.Context) (reading, error) {
		calls.Add(1)
		<-release
		return reading{count: 7, method: MethodRemainingItemCount}, nil
	}
	tr := newTracker(context.Background(), count, times(time.Minute, time.Minute), discardLogger())
	var wg sync.WaitGroup
	results := make(chan Snapshot, 10)
	scrape := func() { defer wg.Done(); results <- tr.Scrape() }
	wg.Add(1)
	go scrape()
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for range 9 {
		wg.Add(1)
		go scrape()
	}
	// Released once all ten wait on a read: a scrape after the read would start another. A
	// tracker that started one read per scrape never gets there.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		tr.mu.Lock()
		joined := 0
		if tr.inflight != nil {
			joined = tr.inflight.scrapes
		}
		tr.mu.Unlock()
		if joined == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d of 10 overlapping scrapes wait on the read in flight", joined)
		}
	}
	close(release)
	wg.Wait()
	close(results)
	if n := calls.Load(); n != 1 {
		t.Errorf("%d reads for 10 overlapping scrapes, want 1", n)
	}
	for s := range results {
		if s.Count != 7 || !s.Fresh {
			t.Errorf("scrape got %+v", s)
		}
	}
}
