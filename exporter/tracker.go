package exporter

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Snapshot is what one scrape publishes.
type Snapshot struct {
	HasCount bool      // false until the first successful read
	Count    int64     // the count of the last successful read
	Method   string    // how that count was obtained
	ReadAt   time.Time // when that read completed
	Fresh    bool      // this scrape's read succeeded
	Err      string    // why this scrape's read failed ("" when Fresh)
	Failures uint64    // failed reads since start
}

// tracker performs one read per scrape and remembers the last good count, so
// that a failing read republishes it (stale) instead of a 0 that would look
// like demand falling away. Scrapes that arrive while a read is in flight
// share its result, so a burst of scrapers cannot multiply the API load.
type tracker struct {
	count   func(context.Context) (int64, string, error)
	base    context.Context // cancelled on shutdown; not any one request's
	timeout time.Duration
	log     *slog.Logger
	now     func() time.Time

	mu       sync.Mutex
	last     Snapshot // the state after the latest completed read
	inflight *flight
}

type flight struct {
	done chan struct{}
	snap Snapshot
}

func newTracker(ctx context.Context, count func(context.Context) (int64, string, error), timeout time.Duration, log *slog.Logger) *tracker {
	return &tracker{count: count, base: ctx, timeout: timeout, log: log, now: time.Now}
}

// Scrape reads the API once (or joins the read in flight) and returns what to
// publish.
func (t *tracker) Scrape() Snapshot {
	t.mu.Lock()
	if f := t.inflight; f != nil {
		t.mu.Unlock()
		<-f.done
		return f.snap
	}
	f := &flight{done: make(chan struct{})}
	t.inflight = f
	t.mu.Unlock()

	// The read is bounded by its own timeout, not by the request that started
	// it: scrapers that joined it must not lose it when the first one leaves.
	ctx, cancel := context.WithTimeout(t.base, t.timeout)
	n, method, err := t.count(ctx)
	cancel()

	t.mu.Lock()
	prev := t.last
	next := prev
	if err != nil {
		next.Fresh = false
		next.Err = err.Error()
		next.Failures++
	} else {
		next = Snapshot{HasCount: true, Count: n, Method: method, ReadAt: t.now().UTC(), Fresh: true, Failures: prev.Failures}
	}
	t.last = next
	f.snap = next
	t.inflight = nil
	t.mu.Unlock()
	close(f.done)

	t.logTransition(prev, next, err)
	return next
}

// logTransition writes one line per failed read and one per change worth
// knowing about, not one per healthy scrape.
func (t *tracker) logTransition(prev, next Snapshot, err error) {
	switch {
	case err != nil && next.HasCount:
		t.log.Warn("sandboxclaims read failed; serving the last good count as stale",
			"reason", err.Error(), "last_count", next.Count, "last_read_at", next.ReadAt.Format(time.RFC3339), "failures", next.Failures)
	case err != nil:
		t.log.Warn("sandboxclaims read failed; no count yet, answering 503",
			"reason", err.Error(), "failures", next.Failures)
	case !prev.HasCount:
		t.log.Info("first count", "count", next.Count, "method", next.Method)
	case !prev.Fresh:
		t.log.Info("read recovered", "count", next.Count, "method", next.Method, "was_stale_count", prev.Count)
	case prev.Count != next.Count:
		t.log.Info("count changed", "from", prev.Count, "to", next.Count, "method", next.Method)
	}
}
