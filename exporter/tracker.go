package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ScrapeDeadline is how long a scrape waits for a read before it answers with
// the freshest count it has. It is below KEDA's default HTTP timeout (3 s), so
// a hung or slow API reaches KEDA as a count, never as a timeout. The program
// sets the ScaledObject trigger's timeout from its copy of this value
// (contract.ExporterScrapeDeadline; the exporter ships as source and imports
// nothing of the project), and contract/exporter_test.go holds the two equal.
const ScrapeDeadline = 2 * time.Second

// ReuseWindow: a scrape that comes within this time after a read of its pool completed gets that
// read's answer instead of starting another (scrapes that come while a read runs join it). KEDA
// sends one GET per trigger per poll, two or three to the same pool's URL one after the other, so
// a poll costs one read of the API; a scrape sees data at most this much older than a read of its
// own would be (plus the read's own time), against a 15 s HPA sync. contract.ExporterReuseWindow
// is the program's copy.
const ReuseWindow = time.Second

// Snapshot is what one scrape publishes.
type Snapshot struct {
	HasCount bool      // false until the first successful read
	Count    int64     // the count of the last successful read
	Arrivals *Arrivals // that read's arrivals; nil for a pool without arrival windows
	Method   string    // how that count was obtained
	ReadAt   time.Time // when that read completed
	Fresh    bool      // this scrape's read succeeded within the scrape deadline
	Err      string    // why the count is not fresh ("" when Fresh)
	Failures uint64    // failed reads since start
}

// tracker runs reads of the API and remembers the last good count, so that a
// failing or slow read republishes it (stale) instead of a 0 that would look
// like demand falling away.
//
// A scrape starts a read (or joins the one in flight, or takes the one that
// completed less than reuse ago: a burst of scrapers cannot multiply the API
// load) and waits for it at most scrapeDeadline. The read itself runs on,
// bounded by readTimeout, and its result serves the scrapes after it, so a
// list slower than a scrape still moves the count.
type tracker struct {
	count          func(context.Context) (reading, error)
	base           context.Context // cancelled on shutdown; not any one request's
	readTimeout    time.Duration
	scrapeDeadline time.Duration
	reuse          time.Duration // see ReuseWindow; 0 starts a read for every scrape not joining one
	log            *slog.Logger
	now            func() time.Time

	mu       sync.Mutex
	last     Snapshot // the state after the latest completed read
	inflight *flight
	recent   *flight // the latest completed read
}

type flight struct {
	done    chan struct{}
	started time.Time
	ended   time.Time
	snap    Snapshot
	scrapes int // the scrapes that started or joined it (under the tracker's mu); tests wait on it
}

// trackerTimes are a tracker's three bounds.
type trackerTimes struct {
	readTimeout, scrapeDeadline, reuse time.Duration
}

// productionTimes are the bounds Serve runs with.
func productionTimes(readTimeout time.Duration) trackerTimes {
	return trackerTimes{readTimeout: readTimeout, scrapeDeadline: ScrapeDeadline, reuse: ReuseWindow}
}

func newTracker(ctx context.Context, count func(context.Context) (reading, error), times trackerTimes, log *slog.Logger) *tracker {
	return &tracker{count: count, base: ctx, readTimeout: times.readTimeout, scrapeDeadline: times.scrapeDeadline,
		reuse: times.reuse, log: log, now: time.Now}
}

// Scrape returns what to publish: the result of a read that completed
// within the reuse window, or of the read it started or joined if that read
// ends within the scrape deadline, else the last completed read's state
// marked not fresh.
func (t *tracker) Scrape() Snapshot {
	t.mu.Lock()
	f := t.inflight
	if f == nil && t.recent != nil && t.now().Sub(t.recent.ended) < t.reuse {
		snap := t.recent.snap
		t.mu.Unlock()
		return snap
	}
	if f == nil {
		f = &flight{done: make(chan struct{}), started: t.now()}
		t.inflight = f
		go t.read(f)
	}
	f.scrapes++
	t.mu.Unlock()

	deadline := time.NewTimer(t.scrapeDeadline)
	defer deadline.Stop()
	select {
	case <-f.done:
		return f.snap
	case <-deadline.C:
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-f.done: // finished while the lock was taken
		return f.snap
	default:
	}
	snap := t.last
	snap.Fresh = false
	snap.Err = fmt.Sprintf("a read of the API has been running for %s (scrape deadline %s, read bound %s); "+
		"this is the last completed read's state", t.now().Sub(f.started).Round(time.Millisecond), t.scrapeDeadline, t.readTimeout)
	if t.last.Err != "" {
		snap.Err += ", which failed: " + t.last.Err
	}
	return snap
}

// read performs one bounded read and records its outcome. It runs on its own
// context, not a request's: scrapers that joined it, and the next scrape that
// uses its result, must not lose it when the first scraper leaves.
func (t *tracker) read(f *flight) {
	ctx, cancel := context.WithTimeout(t.base, t.readTimeout)
	r, err := t.count(ctx)
	cancel()
	if err == nil && (r.count < 0 || r.count > MaxClaimCount) {
		err = fmt.Errorf("the read produced %d, which is not a count of claims (0..%d)", r.count, MaxClaimCount)
	}

	t.mu.Lock()
	prev := t.last
	next := prev
	if err != nil {
		next.Fresh = false
		next.Err = err.Error()
		next.Failures++
	} else {
		next = Snapshot{HasCount: true, Count: r.count, Arrivals: r.arrivals, Method: r.method, ReadAt: t.now().UTC(), Fresh: true, Failures: prev.Failures}
	}
	t.last = next
	f.snap = next
	f.ended = t.now()
	t.inflight = nil
	t.recent = f
	t.mu.Unlock()
	// Logged before the waiting scrapes are released: a scrape's answer never
	// comes before the line that explains it.
	t.logTransition(prev, next, err)
	close(f.done)
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
