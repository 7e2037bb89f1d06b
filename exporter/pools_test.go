package exporter

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func twoPools() []Pool {
	return []Pool{{Name: "code", Namespace: "agents-code"}, {Name: "browser", Namespace: "agents-browser", Selector: testSelector}}
}

func twoPoolAPI(t *testing.T) *fakeAPI {
	api := newFakeAPI(t, "agents-code")
	api.addClaimsIn("agents-code", "claim", 3, nil, time.Time{})
	api.addClaimsIn("agents-browser", "claim", 5, partOfLabels, time.Time{})
	api.addClaimsIn("agents-browser", "other", 4, nil, time.Time{}) // not the pool's: the selector leaves them out
	return api
}

// wantNotFound asserts a 404 ErrorResponse that says what it should and has
// no count KEDA could read.
func wantNotFound(t *testing.T, h *harness, path string, says ...string) {
	t.Helper()
	code, m := h.demandAt(t, path)
	if code != http.StatusNotFound {
		t.Errorf("%s: status %d, want 404: %v", path, code, m)
	}
	if _, ok := m["active_claims"]; ok {
		t.Errorf("%s: the 404 carries active_claims: %v", path, m)
	}
	e, _ := m["error"].(string)
	for _, s := range says {
		if !strings.Contains(e, s) {
			t.Errorf("%s: error %q does not say %q", path, e, s)
		}
	}
}

// Each pool is served at /demand/{pool}, with its own count, namespace,
// selector and name. With several pools, /demand names their paths in a 404;
// a name no pool has, /demand/ and deeper paths are 404s naming the pools.
func TestPoolsAreServedAtTheirPaths(t *testing.T) {
	h := newPoolsHarness(t, twoPoolAPI(t), twoPools(), testTimes(5*time.Second))
	m := h.wantCountAt(t, "/demand/code", 3, true)
	if m["pool"] != "code" || m["namespace"] != "agents-code" || m["selector"] != "" || m["method"] != MethodRemainingItemCount {
		t.Errorf("/demand/code = %v", m)
	}
	m = h.wantCountAt(t, "/demand/browser", 5, true)
	if m["pool"] != "browser" || m["namespace"] != "agents-browser" || m["selector"] != testSelector || m["method"] != MethodList {
		t.Errorf("/demand/browser = %v", m)
	}
	for _, r := range h.api.recorded() {
		if strings.Contains(r.Path, "agents-browser") != (r.Query.Get("labelSelector") == testSelector) {
			t.Errorf("request %s?%s: each pool's read goes to its own namespace with its own selector", r.Path, r.Query.Encode())
		}
	}
	wantNotFound(t, h, "/demand", "2 pools", "/demand/code, /demand/browser")
	wantNotFound(t, h, "/demand/nope", `no pool "nope"`, "/demand/code, /demand/browser")
	wantNotFound(t, h, "/demand/", "/demand/code, /demand/browser")
	wantNotFound(t, h, "/demand/code/x", `no pool "code/x"`)
}

// One named pool is served at /demand as well as at /demand/{pool}.
func TestOneNamedPoolIsAlsoAtDemand(t *testing.T) {
	h := newPoolsHarness(t, twoPoolAPI(t), twoPools()[:1], testTimes(5*time.Second))
	if m := h.wantCount(t, 3, true); m["pool"] != "code" {
		t.Errorf("/demand = %v, want pool code", m)
	}
	h.wantCountAt(t, "/demand/code", 3, true)
	wantNotFound(t, h, "/demand/browser", `no pool "browser"`, "/demand/code")
}

// Without EXPORTER_POOLS the answer is today's, field for field and in the same
// order, with "pool":"" added at the end; there is no /demand/{pool}.
func TestOnePoolAnswerKeepsItsFields(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 3, nil)
	h := newHarness(t, api, "", time.Minute)
	code, body := h.get(t, "/demand")
	want := regexp.MustCompile(`^\{"active_claims":3,"namespace":"` + testNS + `","selector":"","read_at":"[0-9T:Z-]+","fresh":true,"method":"remainingItemCount","pool":""\}\n$`)
	if code != http.StatusOK || !want.MatchString(body) {
		t.Errorf("/demand = %d %q, want it to match %s", code, body, want)
	}
	api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		writeStatus(w, http.StatusInternalServerError, "InternalError", "down")
		return true
	})
	code, body = h.get(t, "/demand")
	want = regexp.MustCompile(`^\{"active_claims":3,"namespace":"` + testNS + `","selector":"","read_at":"[0-9T:Z-]+","fresh":false,"method":"remainingItemCount","stale_reason":"[^"]+","pool":""\}\n$`)
	if code != http.StatusOK || !want.MatchString(body) {
		t.Errorf("stale /demand = %d %q, want it to match %s", code, body, want)
	}
	wantNotFound(t, h, "/demand/x", `no pool "x"`, "one pool, served at /demand")
}

// /metrics carries every pool's series under pool and namespace labels, and the
// arrival series for a pool with windows. A pool without a count has no series
// (a comment says why), never a 0, while the others are served; with no count
// at all the answer is a 503.
func TestMetricsCarryEachPool(t *testing.T) {
	api := twoPoolAPI(t)
	api.setClock(t0)
	api.addClaimsIn("agents-arrive", "claim", 2, nil, t0.Add(-10*time.Second))
	pools := append(twoPools(), Pool{Name: "arrive", Namespace: "agents-arrive", ShortWindow: 30 * time.Second, LongWindow: 180 * time.Second})
	h := newPoolsHarness(t, api, pools, testTimes(5*time.Second))
	code, body := h.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d\n%s", code, body)
	}
	for _, want := range []string{
		"# TYPE warmpool_active_claims gauge\n" +
			`warmpool_active_claims{pool="code",namespace="agents-code"} 3` + "\n" +
			`warmpool_active_claims{pool="browser",namespace="agents-browser"} 5` + "\n" +
			`warmpool_active_claims{pool="arrive",namespace="agents-arrive"} 2` + "\n",
		`warmpool_active_claims_fresh{pool="browser",namespace="agents-browser"} 1` + "\n",
		`warmpool_active_claims_read_failures_total{pool="code",namespace="agents-code"} 0` + "\n",
		`warmpool_active_claims_read_timestamp_seconds{pool="arrive",namespace="agents-arrive"} `,
		"# TYPE warmpool_arrivals gauge\n" + `warmpool_arrivals{pool="arrive",namespace="agents-arrive",window="short",window_seconds="30"} 2` + "\n" +
			`warmpool_arrivals{pool="arrive",namespace="agents-arrive",window="long",window_seconds="180"} 2` + "\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		// warmpool_exporter_* describe the exporter itself, not a pool.
		if strings.HasPrefix(line, "warmpool_") && !strings.HasPrefix(line, "warmpool_exporter_") && !strings.Contains(line, `{pool="`) {
			t.Errorf("series without a pool label: %q", line)
		}
	}

	// One pool that never had a count: no series of its own, the others served.
	api2 := twoPoolAPI(t)
	api2.setFault(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if strings.Contains(r.URL.Path, "agents-browser") {
			writeStatus(w, http.StatusForbidden, "Forbidden", "cannot list resource")
			return true
		}
		return false
	})
	h = newPoolsHarness(t, api2, twoPools(), testTimes(5*time.Second))
	code, body = h.get(t, "/metrics")
	if code != http.StatusOK || strings.Contains(body, `pool="browser"`) ||
		!strings.Contains(body, `# pool "browser" (namespace "agents-browser"): no successful read`) ||
		!strings.Contains(body, `warmpool_active_claims{pool="code",namespace="agents-code"} 3`) {
		t.Errorf("/metrics with one pool unread = %d:\n%s", code, body)
	}
	api2.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		writeStatus(w, http.StatusForbidden, "Forbidden", "cannot list resource")
		return true
	})
	h = newPoolsHarness(t, api2, twoPools(), testTimes(5*time.Second))
	if code, body = h.get(t, "/metrics"); code != http.StatusServiceUnavailable || strings.Contains(body, "warmpool_active_claims{") {
		t.Errorf("/metrics with no pool read = %d, want 503 without a value:\n%s", code, body)
	}
}

// Pools are read on their own: a fault in one pool's namespace (its Role
// missing) leaves the other's answer fresh, and serves the faulty one's last
// good count, stale.
func TestAPoolsFaultLeavesTheOthersFresh(t *testing.T) {
	api := twoPoolAPI(t)
	h := newPoolsHarness(t, api, twoPools(), testTimes(5*time.Second))
	h.wantCountAt(t, "/demand/code", 3, true)
	h.wantCountAt(t, "/demand/browser", 5, true)
	api.setFault(func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if strings.Contains(r.URL.Path, "agents-code") {
			writeStatus(w, http.StatusForbidden, "Forbidden", "cannot list resource")
			return true
		}
		return false
	})
	api.addClaimsIn("agents-browser", "claim-new", 1, partOfLabels, time.Time{})
	h.wantCountAt(t, "/demand/browser", 6, true)
	m := h.wantCountAt(t, "/demand/code", 3, false)
	if r, _ := m["stale_reason"].(string); !strings.Contains(r, "403") {
		t.Errorf("stale_reason = %q, want the 403", r)
	}
	var warn map[string]any
	for _, l := range h.logs.logLines(t) {
		if l["level"] == "WARN" {
			warn = l
		}
	}
	if warn == nil || warn["pool"] != "code" || warn["namespace"] != "agents-code" {
		t.Errorf("the failed read's log line does not name its pool: %v", warn)
	}
}

// One pool's bad entry does not take the other pools' metric away: the good pools keep their
// counts, the refused one answers its own path with an error (never a 0) that says why, and
// /healthz (still 200, a restart would not mend it) and /metrics name it.
func TestARefusedEntryLeavesTheOtherPoolsServed(t *testing.T) {
	env := map[string]string{"EXPORTER_API_URL": "https://x", "EXPORTER_TOKEN_FILE": "/t",
		"EXPORTER_POOLS": `[{"name": "code", "namespace": "agents-code"},
			{"name": "typo", "namespace": "agents-typo", "selector": " kind=typo"},
			{"name": "browser", "namespace": "agents-browser", "selector": "` + testSelector + `"}]`}
	cfg, err := LoadConfig(nil, envOf(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h := newConfigHarness(t, twoPoolAPI(t), cfg, testTimes(5*time.Second))
	h.wantCountAt(t, "/demand/code", 3, true)
	h.wantCountAt(t, "/demand/browser", 5, true)

	code, m := h.demandAt(t, "/demand/typo")
	e, _ := m["error"].(string)
	if _, hasCount := m["active_claims"]; code != http.StatusServiceUnavailable || hasCount ||
		!strings.Contains(e, `pool 2 (name "typo")`) || !strings.Contains(e, "whitespace") {
		t.Errorf("/demand/typo = %d %v; want a 503 without a count naming entry 2 and its problem", code, m)
	}
	if code, body := h.get(t, "/healthz"); code != http.StatusOK || !strings.HasPrefix(body, "ok\n1 pool entries") ||
		!strings.Contains(body, `pool 2 (name "typo")`) {
		t.Errorf("/healthz = %d %q; want 200 naming the refused entry", code, body)
	}
	_, metrics := h.get(t, "/metrics")
	for _, want := range []string{"warmpool_exporter_refused_pools 1\n", `warmpool_exporter_refused_pool_info{index="2",pool="typo"} 1`,
		`warmpool_active_claims{pool="code",namespace="agents-code"} 3`, `warmpool_active_claims{pool="browser",namespace="agents-browser"} 5`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	for _, r := range h.api.recorded() {
		if strings.Contains(r.Path, "agents-typo") {
			t.Errorf("the refused entry's namespace was read: %s", r.Path)
		}
	}

	// With every entry served, the gauge reads 0 (present, so an alert reads a value).
	h = newPoolsHarness(t, twoPoolAPI(t), twoPools(), testTimes(5*time.Second))
	h.wantCountAt(t, "/demand/code", 3, true)
	if _, metrics := h.get(t, "/metrics"); !strings.Contains(metrics, "warmpool_exporter_refused_pools 0\n") {
		t.Errorf("/metrics lacks warmpool_exporter_refused_pools 0:\n%s", metrics)
	}
}

// KEDA sends one GET per trigger per poll to the same URL. Scrapes of one pool
// within the reuse window after a read completed, or while it runs, share it:
// three triggers in a row, three at once, and /metrics after /demand each cost
// one read (three pages here). A scrape at the end of the window reads again.
func TestThreeTriggersCostOneRead(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.setClock(t0)
	api.addClaimsIn(testNS, "claim", 1203, nil, t0)
	// The production reuse window, with a minute for the read and the scrape's wait: each
	// scrape here must get its read's fresh answer, and a loaded machine has taken longer
	// than the 2 s scrape deadline to list 1203 claims.
	h := newPoolsHarness(t, api, []Pool{arrivalPool}, trackerTimes{readTimeout: time.Minute, scrapeDeadline: time.Minute, reuse: ReuseWindow})
	var clock atomic.Int64
	clock.Store(t0.UnixNano())
	h.pools[0].tracker.now = func() time.Time { return time.Unix(0, clock.Load()) }
	reads := func() int { return len(api.recorded()) / 3 }

	for range 3 { // in a row, as KEDA's operator asks its triggers
		h.wantCountAt(t, "/demand/code", 1203, true)
	}
	if n := reads(); n != 1 {
		t.Errorf("three scrapes in a row: %d reads, want 1", n)
	}
	clock.Add(int64(ReuseWindow - time.Nanosecond))
	h.get(t, "/metrics")
	if n := reads(); n != 1 {
		t.Errorf("/metrics within the reuse window: %d reads, want still 1", n)
	}

	clock.Add(int64(time.Nanosecond)) // the window has passed
	h.wantCountAt(t, "/demand/code", 1203, true)
	if n := reads(); n != 2 {
		t.Errorf("a scrape at the end of the reuse window: %d reads, want 2", n)
	}

	clock.Add(int64(15 * time.Second)) // next poll: three at once
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); h.get(t, "/demand/code") }()
	}
	wg.Wait()
	if n := reads(); n != 3 {
		t.Errorf("three scrapes at once: %d reads in all, want 3", n)
	}
}
