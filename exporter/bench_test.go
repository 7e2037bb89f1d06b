package exporter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// The cost of reads at 10 000 claims a pool, against the fake API server (same
// process, so ns/op includes serving the bytes). api-bytes/op and
// api-requests/op are what the API server sent and was asked per op; B/op and
// allocs/op are the whole process's.
//
//   - BenchmarkScrape*: one read of one pool (what one scrape costs when it
//     does not share a read), for each way of reading.
//   - BenchmarkPoll*: one KEDA poll through the HTTP handler: a GET of each
//     pool's /demand/{pool} (three pools), or three triggers' GETs of one
//     pool's URL, with the production reuse window and each poll 15 s after
//     the last.
//
// Run: go test ./exporter -run '^$' -bench . -benchmem
const benchClaims = 10000

// benchWindows are the arrival windows of the benchmarks' arrival pools.
var benchWindows = [2]time.Duration{30 * time.Second, 180 * time.Second}

// benchNow is the fake API's clock in the arrival benchmarks: claim i of a pool
// was created i*360 ms before it, so the 10 000 claims span an hour and the
// windows hold 81 and 498 of them (creation times are whole seconds), the
// arrival memory's steady state.
var benchNow = time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC)

func benchCreated(i int) time.Time { return benchNow.Add(-time.Duration(i) * 360 * time.Millisecond) }

func benchAPI(b *testing.B, namespaces ...string) *fakeAPI {
	api := newFakeAPI(b, namespaces[0])
	api.setClock(benchNow)
	for _, ns := range namespaces {
		api.addClaimsFunc(ns, "claim", benchClaims, partOfLabels, benchCreated)
	}
	return api
}

func benchCounter(b *testing.B, pool Pool) (*fakeAPI, *counter) {
	api := benchAPI(b, testNS)
	tokenFile := filepath.Join(b.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(testToken), 0o600)
	c, err := newAPIClient(Config{APIURL: api.URL, TokenFile: tokenFile, ReadTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	pool.Namespace = testNS
	return api, newCounter(c, pool)
}

func reportAPI(b *testing.B, api *fakeAPI, requestsBefore int) {
	b.ReportMetric(float64(api.bytesOut.Load())/float64(b.N), "api-bytes/op")
	b.ReportMetric(float64(len(api.recorded())-requestsBefore)/float64(b.N), "api-requests/op")
}

func runBench(b *testing.B, api *fakeAPI, method string, count func(context.Context) (reading, error)) {
	ctx := context.Background()
	b.ReportAllocs()
	api.bytesOut.Store(0)
	before := len(api.recorded())
	b.ResetTimer()
	for b.Loop() {
		r, err := count(ctx)
		if err != nil || r.count != benchClaims || r.method != method {
			b.Fatalf("count = %+v %v, want %d %s", r, err, benchClaims, method)
		}
	}
	b.StopTimer()
	reportAPI(b, api, before)
}

// No selector: limit=1 and metadata.remainingItemCount.
func BenchmarkScrapeRemainingItemCount(b *testing.B) {
	api, c := benchCounter(b, Pool{})
	runBench(b, api, MethodRemainingItemCount, c.count)
}

// A selector that matches every claim: 20 pages of 500, metadata only.
func BenchmarkScrapePaginatedMetadataList(b *testing.B) {
	api, c := benchCounter(b, Pool{Selector: testSelector})
	runBench(b, api, MethodList, c.count)
}

// Arrival windows [30 s, 180 s]: the same 20 pages, each claim's UID and
// creationTimestamp decoded and the arrival memory kept.
func BenchmarkScrapeArrivals(b *testing.B) {
	api, c := benchCounter(b, Pool{ShortWindow: benchWindows[0], LongWindow: benchWindows[1]})
	runBench(b, api, MethodList, func(ctx context.Context) (reading, error) {
		r, err := c.count(ctx)
		if err == nil && (r.arrivals == nil || r.arrivals.Short != 81 || r.arrivals.Long != 498) {
			b.Fatalf("arrivals = %+v, want 81 and 498", r.arrivals)
		}
		return r, err
	})
}

// For comparison, what the blueprint's exporter does: one full JSON list (14.6
// MB, over the exporter's body cap, which the blueprint did not have).
func BenchmarkScrapeFullList(b *testing.B) {
	api, c := benchCounter(b, Pool{Selector: testSelector})
	c.api.maxPageBytes = 64 << 20
	runBench(b, api, "full", func(ctx context.Context) (reading, error) {
		page, err := c.api.list(ctx, testNS, url.Values{"labelSelector": {testSelector}}, acceptJSON, nil)
		if err != nil {
			return reading{}, err
		}
		return reading{count: page.count, method: "full"}, nil
	})
}

// runPolls runs one poll per op through the handler of pools served from api,
// the trackers' clock 15 s later each poll (a KEDA polling interval), and
// each poll's GETs in order.
func runPolls(b *testing.B, api *fakeAPI, pools []Pool, paths []string) {
	h := newPoolsHarness(b, api, pools, productionTimes(time.Minute))
	var clock atomic.Int64
	clock.Store(benchNow.UnixNano())
	for _, p := range h.pools {
		p.tracker.now = func() time.Time { return time.Unix(0, clock.Load()) }
	}
	b.ReportAllocs()
	api.bytesOut.Store(0)
	before := len(api.recorded())
	b.ResetTimer()
	for b.Loop() {
		clock.Add(int64(15 * time.Second))
		for _, path := range paths {
			rec := httptest.NewRecorder()
			h.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
	b.StopTimer()
	reportAPI(b, api, before)
}

// threePools is three pools, one namespace each, with or without arrivals.
func threePools(arrivals bool) ([]Pool, []string) {
	var pools []Pool
	var paths []string
	for i := range 3 {
		p := Pool{Name: fmt.Sprintf("pool-%d", i), Namespace: fmt.Sprintf("agents-%d", i)}
		if arrivals {
			p.ShortWindow, p.LongWindow = benchWindows[0], benchWindows[1]
		}
		pools = append(pools, p)
		paths = append(paths, DemandPath+"/"+p.Name)
	}
	return pools, paths
}

// Three pools of 10 000 claims, one-item count each: one poll of the three.
func BenchmarkPollThreePools(b *testing.B) {
	pools, paths := threePools(false)
	runPolls(b, benchAPI(b, pools[0].Namespace, pools[1].Namespace, pools[2].Namespace), pools, paths)
}

// Three pools of 10 000 claims with arrival windows: one poll of the three.
func BenchmarkPollThreePoolsArrivals(b *testing.B) {
	pools, paths := threePools(true)
	runPolls(b, benchAPI(b, pools[0].Namespace, pools[1].Namespace, pools[2].Namespace), pools, paths)
}

// One pool with arrival windows and KEDA's three triggers (claims,
// arrivals_short, arrivals_long) on its URL: one poll is one read.
func BenchmarkPollThreeTriggersArrivals(b *testing.B) {
	pools, paths := threePools(true)
	p := paths[0]
	runPolls(b, benchAPI(b, pools[0].Namespace), pools[:1], []string{p, p, p})
}
