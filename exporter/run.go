package exporter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Run serves the exporter on cfg.Listen until ctx is cancelled.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, cfg, log)
}

// httpTimeouts bound what one client may hold of the server.
type httpTimeouts struct {
	readHeader, read, write, idle time.Duration
}

// serverTimeouts: requests carry no body, so reading one takes the header's
// time; a response takes at most the scrape deadline plus the writing; a
// keep-alive connection (KEDA keeps one per trigger) may idle through a few
// polling intervals (15 s by default) before it is closed.
var serverTimeouts = httpTimeouts{
	readHeader: 5 * time.Second,
	read:       10 * time.Second,
	write:      ScrapeDeadline + 10*time.Second,
	idle:       2 * time.Minute,
}

func newHTTPServer(h http.Handler, t httpTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		MaxHeaderBytes:    16 << 10,
	}
}

// Serve is Run on a listener the caller opened (tests pass one on port 0).
func Serve(ctx context.Context, ln net.Listener, cfg Config, log *slog.Logger) error {
	api, err := newAPIClient(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	srv := newHTTPServer(newHandler(servePools(ctx, api, cfg, productionTimes(cfg.ReadTimeout), log), cfg.Refused), serverTimeouts)
	log.Info("serving", "listen", ln.Addr().String(), "api_url", cfg.APIURL, "pools", describePools(cfg.Pools),
		"token_file", cfg.TokenFile, "ca_file", cfg.CAFile, "read_timeout", cfg.ReadTimeout.String(),
		"scrape_deadline", ScrapeDeadline.String(), "reuse_window", ReuseWindow.String())
	for _, r := range cfg.Refused {
		log.Error("pool entry refused, not served; the other pools are", "index", r.Index, "name", r.Name, "problem", r.Problem)
	}

	shutdownDone := make(chan struct{})
	go func() {
		defer close(shutdownDone)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-shutdownDone
		return nil
	}
	return err
}

// servePools gives each pool its own counter and tracker: pools are read independently, and a
// fault in one pool's namespace (a missing Role) leaves the others' answers fresh.
func servePools(ctx context.Context, api *apiClient, cfg Config, times trackerTimes, log *slog.Logger) []*servedPool {
	pools := make([]*servedPool, 0, len(cfg.Pools))
	for _, p := range cfg.Pools {
		c := newCounter(api, p)
		pools = append(pools, &servedPool{Pool: p, counter: c,
			tracker: newTracker(ctx, c.count, times, log.With("pool", p.Name, "namespace", p.Namespace))})
	}
	return pools
}

// describePools is the start line's view of the configuration.
func describePools(pools []Pool) []map[string]any {
	out := make([]map[string]any, 0, len(pools))
	for _, p := range pools {
		m := map[string]any{"name": p.Name, "namespace": p.Namespace, "selector": p.Selector}
		if p.HasArrivals() {
			m["arrival_windows"] = []string{p.ShortWindow.String(), p.LongWindow.String()}
		}
		out = append(out, m)
	}
	return out
}
