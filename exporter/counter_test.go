package exporter

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Without a selector one limit=1 request gives the exact total through
// remainingItemCount; 0 and 1 claims exercise the "no continue token, so the
// page is the whole list" case.
func TestRemainingItemCountIsExactInOneRequest(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1234} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", n, partOfLabels)
			h := newHarness(t, api, "", time.Minute)
			m := h.wantCount(t, n, true)
			if m["method"] != MethodRemainingItemCount {
				t.Errorf("method = %v, want %s", m["method"], MethodRemainingItemCount)
			}
			reqs := api.recorded()
			if len(reqs) != 1 {
				t.Fatalf("%d API requests for one scrape, want 1", len(reqs))
			}
			q := reqs[0].Query
			if q.Get("limit") != "1" || q.Has("labelSelector") || q.Has("continue") {
				t.Errorf("query = %v, want limit=1 only", q)
			}
		})
	}
}

// Claims come and go between scrapes; every scrape publishes the count at its
// own read, never a remembered or partial one.
func TestRemainingItemCountFollowsChurn(t *testing.T) {
	api := newFakeAPI(t, testNS)
	h := newHarness(t, api, "", time.Minute)
	api.addClaims("a", 3, nil)
	h.wantCount(t, 3, true)
	api.addClaims("b", 700, nil)
	h.wantCount(t, 703, true)
	api.deleteClaims(702)
	h.wantCount(t, 1, true)
	api.deleteClaims(1)
	h.wantCount(t, 0, true)
}

// A server that sends a continue token but no remainingItemCount gets the
// claims counted page by page, never "1".
func TestMissingRemainingItemCountFallsBackToPages(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.omitRemaining = true
	api.addClaims("claim", 1234, nil)
	h := newHarness(t, api, "", time.Minute)
	m := h.wantCount(t, 1234, true)
	if m["method"] != MethodList {
		t.Errorf("method = %v, want %s", m["method"], MethodList)
	}
	reqs := api.recorded()
	if len(reqs) != 1+3 {
		t.Errorf("%d requests, want 1 probe + 3 pages", len(reqs))
	}
}

// With a selector: a paginated metadata-only list that sends the selector,
// the metadata Accept header and each continue token, and adds up the pages.
func TestSelectorCountsEveryPageOfAMetadataList(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 1203, partOfLabels)
	api.addClaims("other", 400, map[string]string{"app.kubernetes.io/part-of": "someone-else"})
	h := newHarness(t, api, testSelector, time.Minute)
	m := h.wantCount(t, 1203, true)
	if m["method"] != MethodList || m["selector"] != testSelector || m["namespace"] != testNS {
		t.Errorf("/demand = %v", m)
	}
	reqs := api.recorded()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 pages of 500", len(reqs))
	}
	seen := map[string]bool{}
	for i, r := range reqs {
		if got := r.Query.Get("labelSelector"); got != testSelector {
			t.Errorf("page %d labelSelector = %q, want %q", i+1, got, testSelector)
		}
		if r.Accept != "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" {
			t.Errorf("page %d Accept = %q, want the PartialObjectMetadataList form", i+1, r.Accept)
		}
		if r.Query.Get("limit") != "500" {
			t.Errorf("page %d limit = %q, want 500", i+1, r.Query.Get("limit"))
		}
		c := r.Query.Get("continue")
		if (i == 0) != (c == "") || seen[c] {
			t.Errorf("page %d continue = %q: want none on the first page, a new token on each later one", i+1, c)
		}
		seen[c] = true
	}
}

// A page that fails mid-list fails the whole read: the published count stays
// the last complete one (1203), never the partial sum of the pages that
// worked (500 or 1000). An expired continue token (410) is such a failure.
func TestFailedPageFailsTheWholeRead(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter){
		"500 on page 3": func(w http.ResponseWriter) {
			writeStatus(w, http.StatusInternalServerError, "InternalError", "etcdserver: request timed out")
		},
		"410 expired continue": func(w http.ResponseWriter) {
			writeStatus(w, http.StatusGone, "Expired", "The provided continue parameter is too old to display a consistent list result.")
		},
	}
	for name, fail := range cases {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", 1203, partOfLabels)
			h := newHarness(t, api, testSelector, time.Minute)
			h.wantCount(t, 1203, true) // requests 1-3
			api.addClaims("new", 50, partOfLabels)
			api.setFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n == 6 { // page 3 of the second scrape
					fail(w)
					return true
				}
				return false
			})
			m := h.wantCount(t, 1203, false)
			if reason, _ := m["stale_reason"].(string); !strings.Contains(reason, "page 3") {
				t.Errorf("stale_reason = %q, want it to name page 3", reason)
			}
			if name == "410 expired continue" && !strings.Contains(h.logs.String(), "continue token expired") {
				t.Errorf("log does not say the continue token expired: %s", h.logs.String())
			}
			api.setFault(nil)
			h.wantCount(t, 1253, true)
		})
	}
}

// listPageJSON is a metadata-only list page with n items and the given
// metadata fields (raw JSON, e.g. `"remainingItemCount":5`).
func listPageJSON(n int, metadata string) string {
	var b strings.Builder
	b.WriteString(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{` + metadata + `},"items":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"kind":"PartialObjectMetadata","metadata":{"name":"c-%d"}}`, i)
	}
	b.WriteString("]}\n")
	return b.String()
}

// A count outside [0, MaxClaimCount] is a failed read, never published:
// len(items) + remainingItemCount must not overflow into a negative (which
// would send the HPA to its floor) or a plausible number. The largest count
// the API could hold is still a count.
func TestCountOutsideWhatTheAPICouldHoldIsAFailedRead(t *testing.T) {
	rejected := map[string]string{
		"overflows int64":     fmt.Sprint(int64(math.MaxInt64)),
		"far above":           fmt.Sprint(int64(1) << 40),
		"above MaxClaimCount": fmt.Sprint(int64(MaxClaimCount)), // plus the page's item
		"negative":            "-5",
	}
	for name, remaining := range rejected {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", 3, nil)
			h := newHarness(t, api, "", time.Minute)
			h.wantCount(t, 3, true)
			api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
				io.WriteString(w, listPageJSON(1, `"continue":"x","remainingItemCount":`+remaining))
				return true
			})
			if r := h.staleReason(t, 3); !strings.Contains(r, "remainingItemCount") || !strings.Contains(r, "not a count") {
				t.Errorf("stale_reason = %q, want it to say the number is not a count", r)
			}
		})
	}
	t.Run("before any good read", func(t *testing.T) {
		api := newFakeAPI(t, testNS)
		api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
			io.WriteString(w, listPageJSON(1, `"continue":"x","remainingItemCount":9223372036854775807`))
			return true
		})
		h := newHarness(t, api, "", time.Minute)
		if code, m := h.demand(t); code != http.StatusServiceUnavailable {
			t.Errorf("/demand = %d %v, want 503", code, m)
		}
	})
	t.Run("the largest count the API could hold is accepted", func(t *testing.T) {
		api := newFakeAPI(t, testNS)
		api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
			io.WriteString(w, listPageJSON(1, fmt.Sprintf(`"continue":"x","remainingItemCount":%d`, MaxClaimCount-1)))
			return true
		})
		h := newHarness(t, api, "", time.Minute)
		h.wantCount(t, MaxClaimCount, true)
	})
}

// A page that is larger than the body cap is asked for again with a smaller
// limit: the count stays exact, one page held at a time stays small.
func TestOversizedPageIsAskedForAgainSmaller(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 1203, partOfLabels)
	h := newHarness(t, api, testSelector, time.Minute)
	h.client.maxPageBytes = 64 << 10 // a page of 500 claims is ~0.7 MB
	h.wantCount(t, 1203, true)
	var limits []string
	for _, r := range api.recorded() {
		limits = append(limits, r.Query.Get("limit"))
	}
	if limits[0] != "500" || limits[len(limits)-1] == "500" {
		t.Errorf("limits asked = %v, want 500 first and smaller after", limits)
	}
}

// A body over the cap fails the read, whether its length is announced or
// not, and even at one item per page: the exporter never holds it whole.
// The cap is lowered to 64 KiB so the fake writes each body at once: at the
// production cap, a loaded machine took longer than a read deadline to write
// the 4 MiB bodies of every retry, and the read ended on the deadline.
func TestBodyOverTheCapFailsTheRead(t *testing.T) {
	const capBytes = 64 << 10
	huge := listPageJSON(capBytes/30, "") // ~60 bytes per item: about twice the cap
	for _, announced := range []bool{true, false} {
		t.Run(fmt.Sprintf("length announced %t", announced), func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", 3, partOfLabels)
			for _, selector := range []string{"", testSelector} {
				h := newHarness(t, api, selector, 60*time.Second)
				h.client.maxPageBytes = capBytes
				h.wantCount(t, 3, true)
				api.setFault(func(w http.ResponseWriter, _ *http.Request, _ int) bool {
					if announced {
						w.Header().Set("Content-Length", fmt.Sprint(len(huge)))
					}
					io.WriteString(w, huge)
					return true
				})
				if r := h.staleReason(t, 3); !strings.Contains(r, "larger than the exporter's cap") {
					t.Errorf("selector %q: stale_reason = %q, want the body cap named", selector, r)
				}
				api.setFault(nil)
			}
		})
	}
}

// A server that hands out a new continue token on every page is cut off at
// maxRequestsPerRead requests, not at the time bound.
func TestEndlessContinueTokensStopAtTheRequestCap(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 3, partOfLabels)
	h := newHarness(t, api, testSelector, time.Minute)
	h.wantCount(t, 3, true)
	before := len(api.recorded())
	api.setFault(func(w http.ResponseWriter, _ *http.Request, n int) bool {
		io.WriteString(w, listPageJSON(1, fmt.Sprintf(`"continue":"token-%d"`, n)))
		return true
	})
	if r := h.staleReason(t, 3); !strings.Contains(r, fmt.Sprintf("more than %d requests", maxRequestsPerRead)) {
		t.Errorf("stale_reason = %q, want the request cap named", r)
	}
	if n := len(api.recorded()) - before; n != maxRequestsPerRead {
		t.Errorf("the read made %d requests, want the cap, %d", n, maxRequestsPerRead)
	}
}
