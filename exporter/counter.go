package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// How a count was obtained; published as "method" so a reader can tell.
const (
	MethodRemainingItemCount = "remainingItemCount"
	MethodList               = "list"
)

// pageSize of the paginated metadata-only list: large enough that 10 000
// claims take 20 requests, small enough that one page stays well under the
// API server's response limits and the exporter's own body cap.
const pageSize = 500

// MaxClaimCount is the most claims one namespace could hold: etcd's largest
// supported backend (8 GiB) divided by a floor on one stored object (64 B).
// A count outside [0, MaxClaimCount] is not a count (an overflowed sum, a
// server's garbage) and fails the read instead of being published.
const MaxClaimCount = 8 << 30 / 64

// maxRequestsPerRead bounds the requests of one read: 200 pages of 500 are
// 100 000 claims, far above any warm pool, while a server that keeps handing
// out continue tokens is cut off after 200 requests, not at the time bound.
const maxRequestsPerRead = 200

// reading is what one complete read of a pool yields.
type reading struct {
	count    int64
	method   string
	arrivals *Arrivals // nil for a pool without arrival windows
}

// counter counts the claims of one pool, always completely.
type counter struct {
	api  *apiClient
	pool Pool
	// arrivals remembers the claims created within the long window (nil without windows).
	arrivals *arrivalMemory
	now      func() time.Time // the fallback clock when the API sends no Date header
	metas    []itemMeta       // one page's items, reused from page to page
}

func newCounter(api *apiClient, pool Pool) *counter {
	c := &counter{api: api, pool: pool, now: time.Now}
	if pool.HasArrivals() {
		c.arrivals = newArrivalMemory(pool.ShortWindow, pool.LongWindow)
	}
	return c
}

// count reads the pool once and returns the number of claims, the method that produced it and,
// for a pool with arrival windows, its arrivals.
//
// Without a selector or arrival windows it asks for one item: the API server then reports how
// many items remain after it (metadata.remainingItemCount), so the total costs
// ~1 KB however many claims there are. The apiserver (storage/continue.go
// PrepareContinueToken, v0.36) computes that number as the size of the list's
// snapshot minus the limit, from etcd's count at the list's revision or from
// the watch cache's snapshot, so on a first page it is exact, not an estimate.
// The server only sets it when no selector is given, so with a selector the
// claims are counted through a paginated metadata-only list, as they are for a pool with arrival
// windows, whose signal needs every claim's creation time.
func (c *counter) count(ctx context.Context) (reading, error) {
	if c.arrivals != nil {
		return c.countArrivals(ctx)
	}
	if c.pool.Selector != "" {
		n, err := c.countPages(ctx, nil)
		return reading{count: n, method: MethodList}, err
	}
	q := url.Values{"limit": {"1"}}
	page, err := c.api.list(ctx, c.pool.Namespace, q, acceptMetadataList, nil)
	if err != nil {
		return reading{method: MethodRemainingItemCount}, err
	}
	items := page.count
	switch rc := page.Metadata.RemainingItemCount; {
	case rc != nil && *rc >= 0 && *rc <= MaxClaimCount-items:
		return reading{count: items + *rc, method: MethodRemainingItemCount}, nil
	case rc != nil:
		// Checked before adding, so a huge value cannot overflow into a
		// plausible (or negative) count.
		return reading{method: MethodRemainingItemCount}, fmt.Errorf("API reported remainingItemCount %d with %d item(s) on the page, "+
			"which is not a count of claims (it must be 0..%d in total)", *rc, items, MaxClaimCount)
	case page.Metadata.Continue == "":
		// No continue token: this page is the whole list.
		return reading{count: items, method: MethodRemainingItemCount}, nil
	default:
		// More items but no count (a server that does not compute it): count
		// them page by page rather than publish a partial number.
		n, err := c.countPages(ctx, nil)
		return reading{count: n, method: MethodList}, err
	}
}

// countArrivals walks the pool's metadata-only list, counting its claims and recording each
// one's creation time. Times are the API server's: "now" is the Date of the list's first page,
// the moment of the snapshot the pages add up to, so a skewed exporter clock shifts nothing.
func (c *counter) countArrivals(ctx context.Context) (reading, error) {
	var now time.Time
	n, err := c.countPages(ctx, func(page *listPage) error {
		if now.IsZero() {
			if now = page.date; now.IsZero() {
				now = c.now()
			}
			c.arrivals.forget(now)
		}
		for i := range c.metas {
			m := &c.metas[i].Metadata
			if m.UID == "" || m.CreationTimestamp.IsZero() {
				return fmt.Errorf("a claim on the list has no metadata.uid or metadata.creationTimestamp (item %d of the page); "+
					"arrivals cannot be counted from it", i+1)
			}
			if err := c.arrivals.see(m.UID, m.CreationTimestamp, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return reading{method: MethodList}, err
	}
	a := c.arrivals.count(now)
	return reading{count: n, method: MethodList, arrivals: &a}, nil
}

// countPages walks the whole list, metadata only. Every page after the first
// carries the continue token, which pins the first page's resourceVersion, so
// the pages add up to one consistent snapshot. Any failing page fails the
// whole count: a partial sum would look like demand falling away.
//
// A page larger than the body cap is asked for again with half the limit
// (claims with large labels or annotations), down to one item per page.
// Errors never carry the continue token: it encodes the last claim's name.
//
// visit, if not nil, is given each page with its items decoded into c.metas; an error from it
// fails the read.
func (c *counter) countPages(ctx context.Context, visit func(*listPage) error) (int64, error) {
	var total int64
	cont := ""
	limit := pageSize
	pages := 1
	for requests := 1; ; requests++ {
		if requests > maxRequestsPerRead {
			return 0, fmt.Errorf("the list needed more than %d requests (page %d, %d claims so far); "+
				"the read gives up rather than load the API server without end", maxRequestsPerRead, pages, total)
		}
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if c.pool.Selector != "" {
			q.Set("labelSelector", c.pool.Selector)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		var metas *[]itemMeta
		if visit != nil {
			metas = &c.metas
		}
		page, err := c.api.list(ctx, c.pool.Namespace, q, acceptMetadataList, metas)
		if errors.Is(err, errPageTooLarge) && limit > 1 {
			limit /= 2
			continue
		}
		if err != nil {
			err = redactToken(err, cont)
			if isExpired(err) {
				return 0, fmt.Errorf("continue token expired on page %d; the next scrape starts over: %w", pages, err)
			}
			return 0, fmt.Errorf("page %d: %w", pages, err)
		}
		if page.count > MaxClaimCount-total {
			return 0, fmt.Errorf("page %d: the pages add up to more than %d claims, which is not a count", pages, MaxClaimCount)
		}
		total += page.count
		if visit != nil {
			if err := visit(page); err != nil {
				return 0, fmt.Errorf("page %d: %w", pages, err)
			}
		}
		next := page.Metadata.Continue
		if next == "" {
			return total, nil
		}
		if next == cont {
			return 0, fmt.Errorf("page %d: API returned the same continue token again", pages)
		}
		cont = next
		pages++
	}
}
