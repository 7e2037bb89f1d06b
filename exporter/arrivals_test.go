package exporter

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// t0 is the fake API server's clock in the arrival tests; the exporter's own
// clock (the real one) is far from it, so a count that used the exporter's
// clock instead of the server's Date would find no claim recent.
var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

var arrivalPool = Pool{Name: "code", Namespace: testNS, ShortWindow: 30 * time.Second, LongWindow: 180 * time.Second}

// wantArrivals asserts an answer's arrival fields.
func wantArrivals(t *testing.T, m map[string]any, short, long int) {
	t.Helper()
	if m["arrivals_short"] != float64(short) || m["arrivals_long"] != float64(long) ||
		m["arrivals_short_window_seconds"] != 30.0 || m["arrivals_long_window_seconds"] != 180.0 {
		t.Fatalf("answer = %v, want arrivals_short=%d arrivals_long=%d over windows 30 and 180", m, short, long)
	}
}

// A pool with windows counts the claims created within each window before the
// read, on the API server's clock, and keeps counting a claim deleted since an
// earlier read saw it, until it leaves the long window; then it is forgotten.
func TestArrivalsCountEachWindowAndRememberDeletedClaims(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.setClock(t0)
	api.addClaimsIn(testNS, "old", 5, nil, t0.Add(-time.Hour))
	api.addClaimsIn(testNS, "mid", 3, nil, t0.Add(-100*time.Second))
	api.addClaimsIn(testNS, "new", 2, nil, t0.Add(-10*time.Second))
	h := newPoolsHarness(t, api, []Pool{arrivalPool}, testTimes(time.Minute))

	m := h.wantCount(t, 10, true)
	wantArrivals(t, m, 2, 5)
	if m["method"] != MethodList || m["pool"] != "code" {
		t.Errorf("answer = %v, want method %s and pool code", m, MethodList)
	}

	// Short-lived claims: gone before the next read, still arrivals.
	api.deletePrefix(testNS, "new")
	api.deletePrefix(testNS, "mid")
	for _, step := range []struct {
		at          time.Duration
		short, long int
	}{
		{5 * time.Second, 2, 5},   // all remembered
		{19 * time.Second, 2, 5},  // "new" is 29 s old: still in the short window
		{20 * time.Second, 0, 5},  // 30 s old: out of it
		{79 * time.Second, 0, 5},  // "mid" is 179 s old
		{80 * time.Second, 0, 2},  // 180 s: out of the long window
		{170 * time.Second, 0, 0}, // "new" too
	} {
		api.setClock(t0.Add(step.at))
		m := h.wantCount(t, 5, true)
		wantArrivals(t, m, step.short, step.long)
	}
	if n := len(h.pools[0].trackerMemory()); n != 0 {
		t.Errorf("the arrival memory holds %d claims after all left the long window, want 0", n)
	}
}

// trackerMemory reads a served pool's arrival memory (tests only).
func (p *servedPool) trackerMemory() map[string]int64 { return p.counter.arrivals.created }

// The window edges, in whole seconds: a claim created exactly W seconds before
// the read is out of window W, one created W-1 seconds before is in, and one
// stamped after the read (a second's truncation, a clock step) is in both.
func TestArrivalWindowEdges(t *testing.T) {
	m := newArrivalMemory(30*time.Second, 180*time.Second)
	for i, age := range []time.Duration{-2 * time.Second, 0, 29 * time.Second, 30 * time.Second, 179 * time.Second, 180 * time.Second, time.Hour} {
		if err := m.see(fmt.Sprint("uid-", i), t0.Add(-age), t0); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.created) != 5 {
		t.Errorf("the memory holds %d claims, want the 5 within the long window", len(m.created))
	}
	if a := m.count(t0); a.Short != 3 || a.Long != 5 {
		t.Errorf("ages -2, 0, 29, 30, 179, 180 s and 1 h: arrivals %+v, want short 3 (-2, 0, 29) and long 5 (up to 179)", a)
	}
	// 151 s later the ages are 149, 151, 180, 181 and 330 s.
	if a := m.count(t0.Add(151 * time.Second)); a.Short != 0 || a.Long != 2 || len(m.created) != 2 {
		t.Errorf("151 s later: arrivals %+v and %d remembered, want 0, 2 and 2", a, len(m.created))
	}
}

// The memory is bounded: a claim beyond the limit fails the read rather than
// grow it; a claim it already holds, or one outside the window, is no new
// entry; and claims leaving the window make room again.
func TestArrivalMemoryIsBounded(t *testing.T) {
	m := newArrivalMemory(30*time.Second, 180*time.Second)
	m.limit = 3
	for i := range 3 {
		if err := m.see(fmt.Sprint("uid-", i), t0.Add(-time.Duration(i)*time.Minute), t0); err != nil {
			t.Fatalf("claim %d of 3: %v", i+1, err)
		}
	}
	if err := m.see("uid-0", t0, t0); err != nil {
		t.Errorf("a claim already remembered was refused: %v", err)
	}
	if err := m.see("old", t0.Add(-time.Hour), t0); err != nil {
		t.Errorf("a claim outside the window was refused: %v", err)
	}
	if err := m.see("uid-3", t0, t0); err == nil || !strings.Contains(err.Error(), "more than 3 claims") {
		t.Errorf("a fourth claim: err %v, want the limit named", err)
	}
	m.forget(t0.Add(61 * time.Second)) // uid-2 (created 2 min before t0) leaves the 180 s window
	if err := m.see("uid-3", t0, t0.Add(61*time.Second)); err != nil {
		t.Errorf("after a claim left the window: %v", err)
	}
}

// A read that fails never becomes 0 arrivals: the answer is the last good
// read's arrivals with its count, fresh=false; before any good read it is a
// 503 with no arrival fields. A list item without uid or creationTimestamp
// fails the read in the same way.
func TestFailedReadNeverServesZeroArrivals(t *testing.T) {
	faults := map[string]func(w http.ResponseWriter){
		"500": func(w http.ResponseWriter) {
			writeStatus(w, http.StatusInternalServerError, "InternalError", "etcdserver: leader changed")
		},
		"item without uid or creationTimestamp": func(w http.ResponseWriter) {
			io.WriteString(w, listPageJSON(2, ""))
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.setClock(t0)
			api.addClaimsIn(testNS, "new", 2, nil, t0.Add(-10*time.Second))
			h := newPoolsHarness(t, api, []Pool{arrivalPool}, testTimes(time.Minute))
			good := h.wantCount(t, 2, true)
			wantArrivals(t, good, 2, 2)

			api.setClock(t0.Add(time.Hour)) // a good read now would find no arrival
			api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool { fault(w); return true })
			m := h.wantCount(t, 2, false)
			wantArrivals(t, m, 2, 2)
			if m["read_at"] != good["read_at"] {
				t.Errorf("stale answer read_at %v, want the good read's %v", m["read_at"], good["read_at"])
			}
			if name != "500" && !strings.Contains(m["stale_reason"].(string), "no metadata.uid or metadata.creationTimestamp") {
				t.Errorf("stale_reason = %q", m["stale_reason"])
			}
			api.setFault(nil)
			wantArrivals(t, h.wantCount(t, 2, true), 0, 0)
		})
	}

	api := newFakeAPI(t, testNS)
	api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		writeStatus(w, http.StatusServiceUnavailable, "ServiceUnavailable", "down")
		return true
	})
	h := newPoolsHarness(t, api, []Pool{arrivalPool}, testTimes(time.Minute))
	code, m := h.demandAt(t, "/demand/code")
	if code != http.StatusServiceUnavailable {
		t.Errorf("before any good read: %d %v, want 503", code, m)
	}
	for _, f := range []string{"active_claims", "arrivals_short", "arrivals_long"} {
		if _, ok := m[f]; ok {
			t.Errorf("the 503 carries %s: %v", f, m)
		}
	}
}

// A pool with windows is read with the paginated metadata-only list even
// without a selector (the one-item read has no creation times); a pool without
// windows keeps the one-item read and its answer has no arrival fields.
func TestArrivalPoolReadsTheMetadataList(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.setClock(t0)
	api.addClaimsIn(testNS, "claim", 1203, nil, t0.Add(-time.Second))
	api.addClaimsIn("plain", "claim", 7, nil, t0)
	h := newPoolsHarness(t, api, []Pool{arrivalPool, {Name: "plain", Namespace: "plain"}}, testTimes(time.Minute))

	wantArrivals(t, h.wantCountAt(t, "/demand/code", 1203, true), 1203, 1203)
	reqs := api.recorded()
	if len(reqs) != 3 {
		t.Fatalf("%d requests for the arrival pool, want 3 pages of 500", len(reqs))
	}
	for i, r := range reqs {
		if r.Query.Get("limit") != "500" || r.Query.Has("labelSelector") || !strings.Contains(r.Accept, "PartialObjectMetadataList") {
			t.Errorf("request %d: %v %q, want a metadata-only page of 500", i+1, r.Query, r.Accept)
		}
	}

	m := h.wantCountAt(t, "/demand/plain", 7, true)
	if m["method"] != MethodRemainingItemCount {
		t.Errorf("pool without windows: method %v, want %s", m["method"], MethodRemainingItemCount)
	}
	for _, f := range []string{"arrivals_short", "arrivals_long", "arrivals_short_window_seconds", "arrivals_long_window_seconds"} {
		if _, ok := m[f]; ok {
			t.Errorf("pool without windows carries %s: %v", f, m)
		}
	}
}

// Without a Date header the window ends at the exporter's own clock.
func TestArrivalsWithoutDateUseTheExportersClock(t *testing.T) {
	api := newFakeAPI(t, testNS)
	now := time.Now()
	api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
		w.Header()["Date"] = nil // net/http then sends none
		fmt.Fprintf(w, `{"kind":"PartialObjectMetadataList","metadata":{},"items":[`+
			`{"metadata":{"uid":"a","creationTimestamp":%q}},{"metadata":{"uid":"b","creationTimestamp":%q}}]}`,
			now.Add(-5*time.Second).UTC().Format(time.RFC3339), now.Add(-time.Hour).UTC().Format(time.RFC3339))
		return true
	})
	h := newPoolsHarness(t, api, []Pool{arrivalPool}, testTimes(time.Minute))
	wantArrivals(t, h.wantCountAt(t, "/demand/code", 2, true), 1, 1)
}

// A read starts by forgetting the claims that left the long window, so a memory
// that reached its limit frees itself instead of failing every read after.
func TestFullArrivalMemoryRecoversAsClaimsAge(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.setClock(t0)
	api.addClaimsIn(testNS, "a", 2, nil, t0)
	h := newPoolsHarness(t, api, []Pool{arrivalPool}, testTimes(time.Minute))
	h.pools[0].counter.arrivals.limit = 2
	wantArrivals(t, h.wantCount(t, 2, true), 2, 2)
	api.deletePrefix(testNS, "a")
	api.setClock(t0.Add(time.Hour))
	api.addClaimsIn(testNS, "b", 2, nil, time.Time{})
	wantArrivals(t, h.wantCount(t, 2, true), 2, 2)
}
