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

// Serve is Run on a listener the caller opened (tests pass one on port 0).
func Serve(ctx context.Context, ln net.Listener, cfg Config, log *slog.Logger) error {
	api, err := newAPIClient(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	c := &counter{api: api, selector: cfg.Selector}
	t := newTracker(ctx, c.count, cfg.Timeout, log)
	srv := &http.Server{
		Handler:           newHandler(t, cfg.Namespace, cfg.Selector),
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Info("serving", "listen", ln.Addr().String(), "api_url", cfg.APIURL, "namespace", cfg.Namespace,
		"selector", cfg.Selector, "token_file", cfg.TokenFile, "ca_file", cfg.CAFile, "timeout", cfg.Timeout.String())

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
