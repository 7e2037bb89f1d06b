package exporter

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockingCount is a count function whose reads wait until released, each
// returning the value it was released with.
type blockingCount struct {
	started chan struct{}
	release chan int64
}

func newBlockingCount() *blockingCount {
	return &blockingCount{started: make(chan struct{}, 16), release: make(chan int64)}
}

func (b *blockingCount) count(ctx context.Context) (reading, error) {
	b.started <- struct{}{}
	select {
	case n := <-b.release:
		return reading{count: n, method: MethodList}, nil
	case <-ctx.Done():
		return reading{method: MethodList}, ctx.Err()
	}
}

// fixedCount is a count function that always reads n.
func fixedCount(n int64, method string) func(context.Context) (reading, error) {
	return func(context.Context) (reading, error) { return reading{count: n, method: method}, nil }
}

// times is a tracker's bounds without reuse.
func times(readTimeout, scrapeDeadline time.Duration) trackerTimes {
	return trackerTimes{readTimeout: readTimeout, scrapeDeadline: scrapeDeadline}
}

// scrapeOrFail runs Scrape and fails the test if it has not answered within
// a generous bound (a hang, not a timing assertion).
func scrapeOrFail(t *testing.T, tr *tracker) Snapshot {
	t.Helper()
	done := make(chan Snapshot, 1)
	go func() { done <- tr.Scrape() }()
	select {
	case s := <-done:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("Scrape did not answer: it waited for the read instead of its own deadline")
		return Snapshot{}
	}
}

// waitIdle waits until no read is in flight.
func waitIdle(t *testing.T, tr *tracker) {
	t.Helper()
	for range 3000 {
		tr.mu.Lock()
		idle := tr.inflight == nil
		tr.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the read never finished")
}

// A scrape answers within its own deadline with the freshest count there is,
// while a slow read goes on in the background; that read's result then
// serves the next scrape, so a list slower than a scrape still moves the
// count instead of freezing it. Before the first count, a slow read is a 503
// (no count), never 0.
func TestScrapeAnswersWithinItsDeadlineWhileTheReadGoesOn(t *testing.T) {
	b := newBlockingCount()
	tr := newTracker(context.Background(), b.count, times(time.Minute, 20*time.Millisecond), discardLogger())

	s := scrapeOrFail(t, tr) // the first read hangs
	if s.HasCount || s.Fresh || !strings.Contains(s.Err, "running") {
		t.Errorf("first scrape during a slow first read = %+v, want no count and the read named as running", s)
	}
	b.release <- 3
	waitIdle(t, tr)

	// The first read's result is there for the next scrape, although that
	// scrape's own read hangs too.
	s = scrapeOrFail(t, tr)
	if !s.HasCount || s.Count != 3 || s.Fresh || !strings.Contains(s.Err, "running") {
		t.Errorf("scrape after the slow read finished = %+v, want its count 3, not fresh", s)
	}
	b.release <- 5
	waitIdle(t, tr)
	if s = scrapeOrFail(t, tr); s.Count != 5 {
		t.Errorf("scrape = %+v, want the background read's count 5", s)
	}
	b.release <- 6
	waitIdle(t, tr)
}

// A read that ends within the scrape deadline is served fresh by the scrape
// that started it.
func TestFastReadIsServedFresh(t *testing.T) {
	tr := newTracker(context.Background(), fixedCount(4, MethodRemainingItemCount), times(time.Minute, time.Minute), discardLogger())
	if s := scrapeOrFail(t, tr); !s.Fresh || s.Count != 4 || s.Err != "" {
		t.Errorf("scrape = %+v, want 4 fresh", s)
	}
}

// The background read is bounded by the read timeout: a hung API ends as a
// failed read, and the next scrape starts a new one.
func TestBackgroundReadIsBounded(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	tr := newTracker(context.Background(), func(ctx context.Context) (reading, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		<-ctx.Done()
		return reading{method: MethodList}, ctx.Err()
	}, times(50*time.Millisecond, time.Minute), discardLogger())
	s := scrapeOrFail(t, tr)
	if s.HasCount || !strings.Contains(s.Err, context.DeadlineExceeded.Error()) || s.Failures != 1 {
		t.Errorf("scrape = %+v, want a failed read bounded by its timeout", s)
	}
	scrapeOrFail(t, tr)
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("%d reads for two scrapes, want 2", calls)
	}
}

// The tracker publishes nothing that is not a count, whatever the count
// function returns; the largest possible count is still published.
func TestReadsNeverPublishANonCount(t *testing.T) {
	for _, n := range []int64{-1, MaxClaimCount + 1, -1 << 63} {
		tr := newTracker(context.Background(), fixedCount(n, MethodList), times(time.Minute, time.Minute), discardLogger())
		if s := scrapeOrFail(t, tr); s.HasCount || !strings.Contains(s.Err, "not a count") {
			t.Errorf("count %d: published %+v", n, s)
		}
	}
	tr := newTracker(context.Background(), fixedCount(MaxClaimCount, MethodList), times(time.Minute, time.Minute), discardLogger())
	if s := scrapeOrFail(t, tr); !s.HasCount || s.Count != MaxClaimCount {
		t.Errorf("the largest count: %+v", s)
	}
}

// KEDA's metrics-api scaler gives up after 3 s unless told otherwise: the
// scrape deadline must leave room for the answer to travel.
func TestScrapeDeadlineIsBelowKEDAsDefaultTimeout(t *testing.T) {
	const kedaDefaultHTTPTimeout = 3 * time.Second
	if ScrapeDeadline <= 0 || ScrapeDeadline > kedaDefaultHTTPTimeout-500*time.Millisecond {
		t.Errorf("ScrapeDeadline = %s, want it positive and at least 0.5 s below KEDA's default %s", ScrapeDeadline, kedaDefaultHTTPTimeout)
	}
	if DefaultReadTimeout <= ScrapeDeadline {
		t.Errorf("DefaultReadTimeout %s is not longer than ScrapeDeadline %s: a read slower than a scrape would never complete", DefaultReadTimeout, ScrapeDeadline)
	}
}
