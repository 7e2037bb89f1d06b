package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DemandResponse is the JSON served at /demand and /demand/{pool}. KEDA's
// metrics-api triggers read active_claims (valueLocation), and for a pool with
// arrival windows arrivals_short and arrivals_long. The fields of the one-pool
// answer come first, as they always have; the rest were added after them.
type DemandResponse struct {
	ActiveClaims int64  `json:"active_claims"`
	Namespace    string `json:"namespace"`
	Selector     string `json:"selector"`
	ReadAt       string `json:"read_at"` // RFC 3339, time of the read that produced the count
	Fresh        bool   `json:"fresh"`   // false: the read for this scrape failed, the count is the last good one
	Method       string `json:"method"`
	StaleReason  string `json:"stale_reason,omitempty"`
	// Pool is the pool's name; "" in the one-pool mode (no EXPORTER_POOLS).
	Pool string `json:"pool"`
	// For a pool with arrival windows (absent otherwise): the claims created within the last
	// short and long window before the read, and the two windows in seconds.
	ArrivalsShort              *int64 `json:"arrivals_short,omitempty"`
	ArrivalsLong               *int64 `json:"arrivals_long,omitempty"`
	ArrivalsShortWindowSeconds *int64 `json:"arrivals_short_window_seconds,omitempty"`
	ArrivalsLongWindowSeconds  *int64 `json:"arrivals_long_window_seconds,omitempty"`
}

// ErrorResponse is served with 503 while there is no count at all, and with
// 404 for a path that names no pool. It has no active_claims field on purpose:
// KEDA must see an error, not a 0.
type ErrorResponse struct {
	Error string `json:"error"`
}

// servedPool is one pool and the tracker of its reads.
type servedPool struct {
	Pool
	counter *counter
	tracker *tracker
}

type server struct {
	pools  []*servedPool // in configuration order
	byName map[string]*servedPool
	// refused are the entries of EXPORTER_POOLS not served; refusedByName those with a name,
	// whose path answers why.
	refused       []PoolProblem
	refusedByName map[string]PoolProblem
}

func newHandler(pools []*servedPool, refused []PoolProblem) http.Handler {
	s := &server{pools: pools, byName: map[string]*servedPool{}, refused: refused, refusedByName: map[string]PoolProblem{}}
	for _, p := range pools {
		if p.Name != "" {
			s.byName[p.Name] = p
		}
	}
	for _, r := range refused {
		if _, served := s.byName[r.Name]; !served && r.Name != "" {
			s.refusedByName[r.Name] = r
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+DemandPath, s.demandOne)
	mux.HandleFunc("GET "+DemandPath+"/{pool}", s.demandPool)
	mux.HandleFunc("GET "+DemandPath+"/", s.demandPool) // /demand/ and deeper: no pool by that name
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /healthz", healthz(refused))
	return mux
}

// demandOne serves /demand: the pool when there is one, else a 404 that names each pool's path.
func (s *server) demandOne(w http.ResponseWriter, _ *http.Request) {
	if len(s.pools) == 1 {
		s.demand(w, s.pools[0])
		return
	}
	notFound(w, fmt.Sprintf("this exporter counts %d pools, each at its own path: %s", len(s.pools), s.poolPaths()))
}

// demandPool serves /demand/{pool}; a name no pool has is a 404.
func (s *server) demandPool(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("pool")
	if p, ok := s.byName[name]; ok {
		s.demand(w, p)
		return
	}
	if r, ok := s.refusedByName[name]; ok {
		// An error, never a 0: KEDA falls back for this pool alone, the other pools keep their counts.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(ErrorResponse{Error: "pool " + strconv.Quote(name) +
			" is not served: its entry in " + PoolsEnv + " is refused: " + r.String()})
		return
	}
	shown := strings.TrimPrefix(r.URL.Path, DemandPath+"/")
	if len(shown) > 64 {
		shown = shown[:64] + "..."
	}
	if len(s.byName) == 0 {
		notFound(w, fmt.Sprintf("no pool %q: this exporter counts one pool, served at %s", shown, DemandPath))
		return
	}
	notFound(w, fmt.Sprintf("no pool %q: the pools are at %s", shown, s.poolPaths()))
}

func (s *server) poolPaths() string {
	paths := make([]string, 0, len(s.pools))
	for _, p := range s.pools {
		paths = append(paths, DemandPath+"/"+p.Name)
	}
	return strings.Join(paths, ", ")
}

func notFound(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(ErrorResponse{Error: msg})
}

func (s *server) demand(w http.ResponseWriter, p *servedPool) {
	snap := p.tracker.Scrape()
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
		Namespace:    p.Namespace,
		Selector:     p.Selector,
		ReadAt:       snap.ReadAt.Format(time.RFC3339),
		Fresh:        snap.Fresh,
		Method:       snap.Method,
		Pool:         p.Name,
	}
	if !snap.Fresh {
		resp.StaleReason = snap.Err
	}
	if a := snap.Arrivals; a != nil {
		short, long := a.Short, a.Long
		sw, lw := int64(a.ShortWindow/time.Second), int64(a.LongWindow/time.Second)
		resp.ArrivalsShort, resp.ArrivalsLong = &short, &long
		resp.ArrivalsShortWindowSeconds, resp.ArrivalsLongWindowSeconds = &sw, &lw
	}
	_ = enc.Encode(resp)
}

// metrics serves every pool's series, each with its pool and namespace labels. Pools are scraped
// at once, so the answer takes at most one scrape deadline. A pool without a count yet has no
// series (a comment says why), never a 0; with no count for any pool the answer is a 503.
func (s *server) metrics(w http.ResponseWriter, _ *http.Request) {
	snaps := make([]Snapshot, len(s.pools))
	var wg sync.WaitGroup
	for i, p := range s.pools {
		wg.Add(1)
		go func() { defer wg.Done(); snaps[i] = p.tracker.Scrape() }()
	}
	wg.Wait()

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	counted := 0
	for i, snap := range snaps {
		if snap.HasCount {
			counted++
			continue
		}
		if len(s.pools) > 1 {
			p := s.pools[i]
			fmt.Fprintf(&b, "# pool %q (namespace %q): no successful read of sandboxclaims yet: %s\n",
				p.Name, p.Namespace, strings.Join(strings.Fields(snap.Err), " "))
		}
	}
	if counted == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "# no successful read of sandboxclaims yet\n")
		_, _ = w.Write([]byte(b.String()))
		return
	}

	// Always present, 0 when every entry is served, so an alert reads a value, not an absence.
	fmt.Fprintf(&b, "# HELP warmpool_exporter_refused_pools Entries of %s the exporter refused and does not serve.\n"+
		"# TYPE warmpool_exporter_refused_pools gauge\nwarmpool_exporter_refused_pools %d\n", PoolsEnv, len(s.refused))
	if len(s.refused) > 0 {
		b.WriteString("# HELP warmpool_exporter_refused_pool_info One series per refused entry: its place in the list and its name as written.\n" +
			"# TYPE warmpool_exporter_refused_pool_info gauge\n")
		for _, r := range s.refused {
			fmt.Fprintf(&b, "warmpool_exporter_refused_pool_info{index=\"%d\",pool=\"%s\"} 1\n", r.Index, escapeLabel(r.Name))
		}
	}

	family := func(name, help, typ string, value func(Snapshot) (any, bool), extra func(Snapshot) string) {
		header := false
		for i, snap := range snaps {
			if !snap.HasCount {
				continue
			}
			v, ok := value(snap)
			if !ok {
				continue
			}
			if !header {
				fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
				header = true
			}
			p := s.pools[i]
			labels := `pool="` + escapeLabel(p.Name) + `",namespace="` + escapeLabel(p.Namespace) + `"`
			if extra != nil {
				labels += "," + extra(snap)
			}
			fmt.Fprintf(&b, "%s{%s} %v\n", name, labels, v)
		}
	}
	always := func(f func(Snapshot) any) func(Snapshot) (any, bool) {
		return func(s Snapshot) (any, bool) { return f(s), true }
	}
	family("warmpool_active_claims", "SandboxClaims counted at the last successful read of the Kubernetes API.", "gauge",
		always(func(s Snapshot) any { return s.Count }), nil)
	family("warmpool_active_claims_fresh", "1 if this scrape's read succeeded, 0 if warmpool_active_claims is the last good count.", "gauge",
		always(func(s Snapshot) any {
			if s.Fresh {
				return 1
			}
			return 0
		}), nil)
	family("warmpool_active_claims_read_timestamp_seconds", "Unix time of the last successful read.", "gauge",
		always(func(s Snapshot) any { return s.ReadAt.Unix() }), nil)
	family("warmpool_active_claims_read_failures_total", "Failed reads of the Kubernetes API since the exporter started.", "counter",
		always(func(s Snapshot) any { return s.Failures }), nil)
	// One family with the window as a label (Prometheus names a measure, not its parameters):
	// window="short"|"long", and window_seconds its length, which the config may change.
	header := false
	for i, snap := range snaps {
		a := snap.Arrivals
		if !snap.HasCount || a == nil {
			continue
		}
		if !header {
			b.WriteString("# HELP warmpool_arrivals SandboxClaims created within the window before the last successful read.\n" +
				"# TYPE warmpool_arrivals gauge\n")
			header = true
		}
		p := s.pools[i]
		for _, w := range []struct {
			name  string
			count int64
			d     time.Duration
		}{{"short", a.Short, a.ShortWindow}, {"long", a.Long, a.LongWindow}} {
			fmt.Fprintf(&b, "warmpool_arrivals{pool=\"%s\",namespace=\"%s\",window=\"%s\",window_seconds=\"%d\"} %d\n",
				escapeLabel(p.Name), escapeLabel(p.Namespace), w.name, int64(w.d/time.Second), w.count)
		}
	}
	_, _ = w.Write([]byte(b.String()))
}

// healthz answers without touching the Kubernetes API, so an API outage never
// fails the liveness probe and restarts the pod, losing the last good count. Refused pool
// entries are named in the body but keep it 200: a restart would not mend them, and the
// served pools must keep their counts.
func healthz(refused []PoolProblem) http.HandlerFunc {
	body := "ok"
	if len(refused) > 0 {
		body += fmt.Sprintf("\n%d pool entries of %s refused, not served:", len(refused), PoolsEnv)
		for _, r := range refused {
			body += "\n  " + r.String()
		}
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
}

// escapeLabel escapes a Prometheus label value.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}
