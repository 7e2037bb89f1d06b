// Command claim-exporter counts the SandboxClaims of one pool or several
// (EXPORTER_POOLS) and serves each pool's count, and its arrivals, to KEDA's
// metrics-api scaler. Flags and environment variables: -help.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"warmpool.local/warm-pool-autoscaling-keda/exporter"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := exporter.LoadConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Error("bad configuration", "reason", err.Error())
		os.Exit(2)
	}
	// SIGTERM is what the kubelet sends; finish in-flight scrapes and exit 0.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := exporter.Run(ctx, cfg, log); err != nil {
		log.Error("exporter stopped", "reason", err.Error())
		os.Exit(1)
	}
}
