// Package exporter counts the SandboxClaim objects in one namespace and serves
// that count over HTTP for KEDA's metrics-api scaler (JSON at /demand) and for
// any Prometheus scraper (/metrics).
//
// It is the only moving part of the warm pool's demand signal, so it is built
// to be exact (the published count is always a complete one), cheap (one list
// request per scrape, as small as the API allows) and never the reason the
// pool shrinks (an API fault serves the last good count, marked stale, and no
// count at all before the first good read is an error status, never 0).
//
// Standard library only: the ClaimExporter component runs it from source in a
// stock golang image with no module download (see PodSource).
package exporter
