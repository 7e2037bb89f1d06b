package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DemandResponse is the JSON served at /demand. KEDA's metrics-api trigger
// reads active_claims (its valueLocation).
type DemandResponse struct {
	ActiveClaims int64  `json:"active_claims"`
	Namespace    string `json:"namespace"`
	Selector     string `json:"selector"`
	ReadAt       string `json:"read_at"` // RFC 3339, time of the read that produced the count
	Fresh        bool   `json:"fresh"`   // false: the read for this scrape failed, the count is the last good one
	Method       string `json:"method"`
	StaleReason  string `json:"stale_reason,omitempty"`
}

// ErrorResponse is served with 503 while there is no count at all. It has no
// active_claims field on purpose: KEDA must see an error, not a 0.
type ErrorResponse struct {
	Error string `json:"error"`
}

type server struct {
	tracker   *tracker
	namespace string
	selector  string
}

func newHandler(t *tracker, namespace, selector string) http.Handler {
	s := &server{tracker: t, namespace: namespace, selector: selector}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+DemandPath, s.demand)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /healthz", healthz)
	return mux
}

func (s *server) demand(w http.ResponseWriter, _ *http.Request) {
	snap := s.tracker.Scrape()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	if !snap.HasCount {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = enc.Encode(ErrorResponse{Error: "no successful read of sandboxclaims yet: " + snap.Err})
		return
	}
	resp := DemandResponse{
		ActiveClaims: snap.Count,
		Namespace:    s.namespace,
		Selector:     s.selector,
		ReadAt:       snap.ReadAt.Format(time.RFC3339),
		Fresh:        snap.Fresh,
		Method:       snap.Method,
	}
	if !snap.Fresh {
		resp.StaleReason = snap.Err
	}
	_ = enc.Encode(resp)
}

func (s *server) metrics(w http.ResponseWriter, _ *http.Request) {
	snap := s.tracker.Scrape()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !snap.HasCount {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "# no successful read of sandboxclaims yet\n")
		return
	}
	ns := `{namespace="` + escapeLabel(s.namespace) + `"}`
	fresh := 0
	if snap.Fresh {
		fresh = 1
	}
	var b strings.Builder
	gauge := func(name, help string, value any, typ string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s%s %v\n", name, help, name, typ, name, ns, value)
	}
	gauge("warmpool_active_claims", "SandboxClaims counted at the last successful read of the Kubernetes API.", snap.Count, "gauge")
	gauge("warmpool_active_claims_fresh", "1 if this scrape's read succeeded, 0 if warmpool_active_claims is the last good count.", fresh, "gauge")
	gauge("warmpool_active_claims_read_timestamp_seconds", "Unix time of the last successful read.", snap.ReadAt.Unix(), "gauge")
	gauge("warmpool_active_claims_read_failures_total", "Failed reads of the Kubernetes API since the exporter started.", snap.Failures, "counter")
	_, _ = w.Write([]byte(b.String()))
}

// healthz answers without touching the Kubernetes API, so an API outage never
// fails the liveness probe and restarts the pod, losing the last good count.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

// escapeLabel escapes a Prometheus label value.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}
