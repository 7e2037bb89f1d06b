package exporter

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// One scrape at 10 000 claims for each way of counting, against the fake API
// server (same process, so ns/op includes serving the bytes). api-bytes/op is
// what the API server sent per scrape; B/op and allocs/op are the whole
// process's. Run: go test ./exporter -run '^$' -bench . -benchmem
const benchClaims = 10000

func benchCounter(b *testing.B, selector string) (*fakeAPI, *counter) {
	api := newFakeAPI(b, testNS)
	api.addClaims("claim", benchClaims, partOfLabels)
	tokenFile := filepath.Join(b.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(testToken), 0o600)
	c, err := newAPIClient(Config{APIURL: api.URL, TokenFile: tokenFile, Namespace: testNS, ReadTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	return api, &counter{api: c, selector: selector}
}

func runBench(b *testing.B, api *fakeAPI, method string, count func(context.Context) (int64, string, error)) {
	ctx := context.Background()
	b.ReportAllocs()
	api.bytesOut.Store(0)
	b.ResetTimer()
	for b.Loop() {
		n, m, err := count(ctx)
		if err != nil || n != benchClaims || m != method {
			b.Fatalf("count = %d %s %v, want %d %s", n, m, err, benchClaims, method)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(api.bytesOut.Load())/float64(b.N), "api-bytes/op")
}

// No selector: limit=1 and metadata.remainingItemCount.
func BenchmarkScrapeRemainingItemCount(b *testing.B) {
	api, c := benchCounter(b, "")
	runBench(b, api, MethodRemainingItemCount, c.count)
}

// A selector that matches every claim: 20 pages of 500, metadata only.
func BenchmarkScrapePaginatedMetadataList(b *testing.B) {
	api, c := benchCounter(b, testSelector)
	runBench(b, api, MethodList, c.count)
}

// For comparison, what the blueprint's exporter does: one full JSON list.
func BenchmarkScrapeFullList(b *testing.B) {
	api, c := benchCounter(b, testSelector)
	runBench(b, api, "full", func(ctx context.Context) (int64, string, error) {
		page, err := c.api.list(ctx, url.Values{"labelSelector": {testSelector}}, acceptJSON)
		if err != nil {
			return 0, "", err
		}
		return page.count, "full", nil
	})
}
