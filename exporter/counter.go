package exporter

import (
	"context"
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
// API server's response limits.
const pageSize = 500

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
	case rc != nil && *rc >= 0:
		return items + *rc, MethodRemainingItemCount, nil
	case rc != nil:
		return 0, MethodRemainingItemCount, fmt.Errorf("API reported a negative remainingItemCount %d", *rc)
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
func (c *counter) countPages(ctx context.Context) (int64, error) {
	var total int64
	cont := ""
	for pages := 1; ; pages++ {
		q := url.Values{"limit": {strconv.Itoa(pageSize)}}
		if c.selector != "" {
			q.Set("labelSelector", c.selector)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		page, err := c.api.list(ctx, q, acceptMetadataList)
		if err != nil {
			if isExpired(err) {
				return 0, fmt.Errorf("continue token expired on page %d; the next scrape starts over: %w", pages, err)
			}
			return 0, fmt.Errorf("page %d: %w", pages, err)
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
	}
}
