package bursts

// KEDA reads a pool's demand from its exporter once per trigger each time it evaluates the
// ScaledObject: for the HPA's sync (through its metrics adapter) and for its own polling loop.
// A tap between the two records each read, so a live day knows when the HPA really read demand
// and what it was served, instead of inferring it from the changes of spec.replicas.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"sync"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/exporter"
)

// DemandRead is one read of a pool's exporter: when it was asked (from the day's start) and the
// counts it served.
type DemandRead struct {
	At    time.Duration `json:"at"`
	Held  int64         `json:"held"`
	Short int64         `json:"short"`
	Long  int64         `json:"long"`
}

// DemandTap is a reverse proxy in front of one exporter that records every read it forwards.
type DemandTap struct {
	URL   string // where KEDA reads: the tap's address and the exporter's path
	srv   *http.Server
	mu    sync.Mutex
	reads []tappedRead
}

type tappedRead struct {
	at   time.Time
	body exporter.DemandResponse
}

// StartDemandTap serves on a free loopback port and forwards every request to the exporter at
// target (its URL, path included); an answer that is not a count is forwarded and not recorded.
func StartDemandTap(target string) (*DemandTap, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &DemandTap{URL: "http://" + l.Addr().String() + u.Path}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host}) }}
	proxy.ModifyResponse = func(resp *http.Response) error {
		asked, _ := resp.Request.Context().Value(askedAt{}).(time.Time)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			return err
		}
		var d exporter.DemandResponse
		if json.Unmarshal(body, &d) == nil {
			t.mu.Lock()
			t.reads = append(t.reads, tappedRead{asked, d})
			t.mu.Unlock()
		}
		return nil
	}
	t.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), askedAt{}, time.Now())))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = t.srv.Serve(l) }()
	return t, nil
}

// askedAt keys the time a read was asked in its request's context.
type askedAt struct{}

// Reads are the reads asked from start until end, in order, timed from start.
func (t *DemandTap) Reads(start, end time.Time) []DemandRead {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []DemandRead
	for _, r := range t.reads {
		if r.at.Before(start) || r.at.After(end) {
			continue
		}
		d := DemandRead{At: r.at.Sub(start), Held: r.body.ActiveClaims}
		if r.body.ArrivalsShort != nil {
			d.Short = *r.body.ArrivalsShort
		}
		if r.body.ArrivalsLong != nil {
			d.Long = *r.body.ArrivalsLong
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Close stops the tap.
func (t *DemandTap) Close() error { return t.srv.Close() }
