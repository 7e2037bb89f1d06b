package verifier

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// DemandReading is what the exporter served for one pool (GET /demand or /demand/<pool>).
type DemandReading struct {
	ActiveClaims int64
	ReadAt       string
	Selector     string
	Method       string
	Fresh        bool
	Via          string
	// Pool is the answer's pool field ("" in the one-pool mode).
	Pool string
	// Fields holds every top-level number of the answer by name: what a metrics-api trigger's
	// valueLocation reads (active_claims, arrivals_short, arrivals_long, ...).
	Fields map[string]float64
}

func (d DemandReading) String() string {
	s := fmt.Sprintf("%s active_claims=%d read_at=%s fresh=%t method=%s selector=%q",
		d.Via, d.ActiveClaims, d.ReadAt, d.Fresh, d.Method, d.Selector)
	if d.Pool != "" {
		s += fmt.Sprintf(" pool=%s", d.Pool)
	}
	for _, k := range []string{contract.DemandArrivalsShortField, contract.DemandArrivalsLongField} {
		if v, ok := d.Fields[k]; ok {
			s += fmt.Sprintf(" %s=%g", k, v)
		}
	}
	return s
}

// longWindow is the exporter's long arrival window (0 when the pool has none).
func (d DemandReading) longWindow() time.Duration {
	return time.Duration(d.Fields[contract.DemandArrivalsLongWindowField] * float64(time.Second))
}

// DemandReader reads the exporter once. An unreachable exporter or an answer
// without active_claims is an error, never 0 claims.
type DemandReader interface {
	Read(ctx context.Context) (DemandReading, error)
}

// parseDemand reads the exporter's JSON; a 503 body ({"error": ...}) has no
// active_claims and is rejected.
func parseDemand(status int, body []byte) (DemandReading, error) {
	var v struct {
		ActiveClaims *int64 `json:"active_claims"`
		ReadAt       string `json:"read_at"`
		Selector     string `json:"selector"`
		Method       string `json:"method"`
		Fresh        bool   `json:"fresh"`
		Error        string `json:"error"`
		Pool         string `json:"pool"`
	}
	if status != http.StatusOK {
		return DemandReading{}, fmt.Errorf("exporter answered HTTP %d: %s", status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return DemandReading{}, fmt.Errorf("exporter answer is not JSON: %v (%q)", err, truncate(string(body), 200))
	}
	if v.ActiveClaims == nil {
		return DemandReading{}, fmt.Errorf("exporter answer has no active_claims: %q", truncate(string(body), 200))
	}
	var all map[string]any
	if err := json.Unmarshal(body, &all); err != nil {
		return DemandReading{}, fmt.Errorf("exporter answer is not a JSON object: %v", err)
	}
	fields := map[string]float64{}
	for k, x := range all {
		if f, ok := x.(float64); ok {
			fields[k] = f
		}
	}
	return DemandReading{ActiveClaims: *v.ActiveClaims, ReadAt: v.ReadAt, Selector: v.Selector, Method: v.Method, Fresh: v.Fresh,
		Pool: v.Pool, Fields: fields}, nil
}

// httpDemand reads the exporter directly (the e2e runs it as a local process).
type httpDemand struct {
	url    string
	client *http.Client
}

func (h httpDemand) Read(ctx context.Context) (DemandReading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return DemandReading{}, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return DemandReading{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return DemandReading{}, err
	}
	d, err := parseDemand(resp.StatusCode, body)
	d.Via = h.url
	return d, err
}

// proxyDemand reads the exporter through the API server's service proxy, so
// verify needs no route to the ClusterIP.
type proxyDemand struct {
	kube      kubernetes.Interface
	ns, svc   string
	path      string
	proxyPath string
}

func newProxyDemand(kube kubernetes.Interface, ns, svc, path string) proxyDemand {
	return proxyDemand{kube: kube, ns: ns, svc: svc, path: path,
		proxyPath: fmt.Sprintf("/api/v1/namespaces/%s/services/http:%s:%d/proxy/%s", ns, svc, contract.ExporterPort, path)}
}

func (p proxyDemand) Read(ctx context.Context) (DemandReading, error) {
	body, err := p.kube.CoreV1().Services(p.ns).ProxyGet("http", p.svc, strconv.Itoa(contract.ExporterPort), p.path, nil).DoRaw(ctx)
	if err != nil {
		// DoRaw turns a non-2xx answer (the exporter's 503) into an error.
		return DemandReading{}, fmt.Errorf("GET %s: %w", p.proxyPath, err)
	}
	d, err := parseDemand(http.StatusOK, body)
	d.Via = p.proxyPath
	return d, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// directDemandURL is where --exporter-url reads a pool: the address given with the pool's own
// path when it names none or the bare /demand (so one address serves every pool of the
// stack), else the URL as given (one pool only: validate refuses a path with several).
func directDemandURL(given string, t PoolTarget) string {
	p := urlPath(given)
	if p != "" && p != strings.TrimPrefix(contract.DemandPath, "/") {
		return given
	}
	origin := given
	if i := strings.Index(given, "://"); i >= 0 {
		if j := strings.Index(given[i+3:], "/"); j >= 0 {
			origin = given[:i+3+j]
		}
	}
	path := t.ExporterPath
	if path == "" {
		path = strings.TrimPrefix(contract.DemandPath, "/")
	}
	return strings.TrimSuffix(origin, "/") + "/" + path
}
