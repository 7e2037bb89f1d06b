package contract

import "time"

// The claim exporter as the other parts see it: its name, port and the answer KEDA reads.
const (
	ExporterName = "claim-exporter"
	ExporterPort = 8080
	// DemandPath serves the claim count as JSON: the one pool's answer when the exporter counts
	// one pool, a 404 naming the per-pool paths (DemandPoolPath) when it counts several.
	DemandPath = "/demand"
	// DemandField is the field of the /demand answer that holds the count (KEDA's valueLocation).
	// An answer without it is an error, never 0 claims.
	DemandField = "active_claims"
	// DemandFreshField says whether the count comes from this scrape's read.
	DemandFreshField = "fresh"
	// DemandReadAtField is when the count was read (RFC 3339).
	DemandReadAtField = "read_at"
	// DemandPoolField names the pool the answer is for ("" in the one-pool mode without
	// ExporterPoolsEnv).
	DemandPoolField = "pool"
	// DemandArrivalsShortField and DemandArrivalsLongField hold, for a pool with arrival windows,
	// the claims created within the last short and long window before the read (claims deleted
	// since an earlier read included). Absent for a pool without windows.
	DemandArrivalsShortField = "arrivals_short"
	DemandArrivalsLongField  = "arrivals_long"
	// DemandArrivalsShortWindowField and DemandArrivalsLongWindowField give the two windows in
	// seconds, as the exporter was configured with them.
	DemandArrivalsShortWindowField = "arrivals_short_window_seconds"
	DemandArrivalsLongWindowField  = "arrivals_long_window_seconds"
)

// ExporterPoolsEnv is the exporter's environment variable listing the pools it counts: a JSON
// array of ExporterPool. Unset, the exporter counts one pool (EXPORTER_NAMESPACE or its own
// namespace, EXPORTER_SELECTOR) served at DemandPath with pool name "". Set, it must not be
// combined with EXPORTER_NAMESPACE or a non-empty EXPORTER_SELECTOR (the exporter refuses to
// start): each pool carries its own.
const ExporterPoolsEnv = "EXPORTER_POOLS"

// ExporterPool is one element of ExporterPoolsEnv, as the program renders it (encoding/json).
type ExporterPool struct {
	// Name is the pool's name: a DNS label of at most 40 characters, unique; served at
	// DemandPoolPath(Name).
	Name string `json:"name"`
	// Namespace holds the pool's claims (the exporter's ServiceAccount needs list there).
	Namespace string `json:"namespace"`
	// Selector is a label selector of the pool's claims; empty counts every claim in Namespace
	// with the one-item read. Pools that share a namespace must each have a different selector.
	Selector string `json:"selector,omitempty"`
	// ArrivalWindowsSeconds is empty (no arrival signal) or [short, long] in whole seconds,
	// 1 <= short < long <= 3600. A pool with windows is read with the paginated metadata list.
	ArrivalWindowsSeconds []int `json:"arrivalWindowsSeconds,omitempty"`
}

// DemandPoolPath is where the exporter serves one pool's answer.
func DemandPoolPath(pool string) string { return DemandPath + "/" + pool }

// ExporterScrapeDeadline is the longest the exporter takes to answer a scrape; it then serves its
// last count while a slow read goes on in the background. Below KEDA's default HTTP timeout (3 s);
// the ScaledObject trigger's timeout is derived from it.
const ExporterScrapeDeadline = 2 * time.Second

// ExporterReuseWindow: a scrape that arrives within this time after a pool's read completed is
// answered with that read instead of a new one (as are scrapes that arrive while it runs), so
// KEDA's two or three triggers on one pool's URL in one poll cost one read of the API. An answer
// may therefore be up to this much older than the scrape (read_at says when it was read).
const ExporterReuseWindow = time.Second
