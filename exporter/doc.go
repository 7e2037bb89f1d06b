// Package exporter counts the SandboxClaim objects of one pool, or of several
// (EXPORTER_POOLS, one namespace or selector each), and serves each pool's
// count over HTTP for KEDA's metrics-api scaler (JSON at /demand/{pool}, or
// /demand for the one pool) and for any Prometheus scraper (/metrics). For a
// pool with arrival windows it also serves the claims created within a short
// and a long window before each read, remembering claims deleted since.
//
// It is the only moving part of the warm pool's demand signal, so it is built
// to be exact (the published count is always a complete one), cheap (at most
// one read of a pool per scrape, shared by the scrapes that come while it runs
// or within ReuseWindow after it, as small as the API allows) and never the
// reason a pool shrinks (an API fault serves the last good answer, marked
// stale, and no count at all before the first good read is an error status,
// never 0).
//
// Standard library only: the ClaimExporter component runs it from source in a
// stock golang image with no module download (see PodSource).
package exporter
