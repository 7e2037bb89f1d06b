package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
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

// counter counts the claims in one namespace, always completely.
type counter struct {
	api      *apiClient
	selector string
}

// count returns the number of claims and the method that produced it.
//
// Without a selector it asks for one item: the API server then reports how
// many items remain after it (metadata.remainingItemCount), so the total costs
// ~1 KB however many claims there are. The apiserver (storage/continue.go
// PrepareContinueToken, v0.36) computes that number as the size of the list's
// snapshot minus the limit, from etcd's count at the list's revision or from
// the watch cache's snapshot, so on a first page it is exact, not an estimate.
// The server only sets it when no selector is given, so with a selector the
// claims are counted through a paginated metadata-only list.
func (c *counter) count(ctx context.Context) (int64, string, error) {
	if c.selector != "" {
		n, err := c.countPages(ctx)
		return n, MethodList, err
	}
	q := url.Values{"limit": {"1"}}
	page, err := c.api.list(ctx, q, acceptMetadataList)
	if err != nil {
		return 0, MethodRemainingItemCount, err
	}
	items := page.count
	switch rc := page.Metadata.RemainingItemCount; {
	case rc != nil && *rc >= 0 && *rc <= MaxClaimCount-items:
		return items + *rc, MethodRemainingItemCount, nil
	case rc != nil:
		// Checked before adding, so a huge value cannot overflow into a
		// plausible (or negative) count.
		return 0, MethodRemainingItemCount, fmt.Errorf("API reported remainingItemCount %d with %d item(s) on the page, "+
			"which is not a count of claims (it must be 0..%d in total)", *rc, items, MaxClaimCount)
	case page.Metadata.Continue == "":
		// No continue token: this page is the whole list.
		return items, MethodRemainingItemCount, nil
	default:
		// More items but no count (a server that does not compute it): count
		// them page by page rather than publish a partial number.
		n, err := c.countPages(ctx)
		return n, MethodList, err
	}
}

// countPages walks the whole list, metadata only. Every page after the first
// carries the continue token, which pins the first page's resourceVersion, so
// the pages add up to one consistent snapshot. Any failing page fails the
// whole count: a partial sum would look like demand falling away.
//
// A page larger than the body cap is asked for again with half the limit
// (claims with large labels or annotations), down to one item per page.
// Errors never carry the continue token: it encodes the last claim's name.
func (c *counter) countPages(ctx context.Context) (int64, error) {
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
		if c.selector != "" {
			q.Set("labelSelector", c.selector)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		page, err := c.api.list(ctx, q, acceptMetadataList)
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
