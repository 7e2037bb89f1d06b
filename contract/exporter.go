package contract

import "time"

// The claim exporter as the other parts see it: its name, port and the answer KEDA reads.
const (
	ExporterName = "claim-exporter"
	ExporterPort = 8080
	// DemandPath serves the claim count as JSON.
	DemandPath = "/demand"
	// DemandField is the field of the /demand answer that holds the count (KEDA's valueLocation).
	// An answer without it is an error, never 0 claims.
	DemandField = "active_claims"
	// DemandFreshField says whether the count comes from this scrape's read.
	DemandFreshField = "fresh"
	// DemandReadAtField is when the count was read (RFC 3339).
	DemandReadAtField = "read_at"
)

// ExporterScrapeDeadline is the longest the exporter takes to answer a scrape; it then serves its
// last count while a slow read goes on in the background. Below KEDA's default HTTP timeout (3 s);
// the ScaledObject trigger's timeout is derived from it.
const ExporterScrapeDeadline = 2 * time.Second
