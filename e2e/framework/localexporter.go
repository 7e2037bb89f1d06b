package framework

import (
	"context"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// ExporterCommand is the claim exporter's command package, built by GoBuild.
const ExporterCommand = Module + "/exporter/cmd/claim-exporter"

// LocalExporter is the claim exporter run as a local process: how TestLiveRealNodeEndToEnd, the benchmarks
// and the demo on simulated nodes run it (KEDA then reads it by the program's exporterUrl). The
// one way they start it.
type LocalExporter struct {
	Binary    string // built from ExporterCommand
	APIURL    string // the API server, or a proxy in front of it
	CAFile    string
	TokenFile string // a token of the exporter's ServiceAccount (the exporter re-reads it)
	Addr      string // where it listens, host:port
	// Namespace and Selector choose one pool's claims; Pools (EXPORTER_POOLS, the multi-pool
	// interface of contract.ExporterPool) several. Exactly one of Namespace and Pools.
	Namespace, Selector string
	Pools               string
	ReadTimeout         time.Duration // 0: the exporter's default
}

// Args is its command line.
func (e LocalExporter) Args() []string {
	args := []string{"--api-url", e.APIURL, "--token-file", e.TokenFile, "--ca-file", e.CAFile, "--listen", e.Addr}
	if e.Namespace != "" {
		args = append(args, "--namespace", e.Namespace)
	}
	if e.Selector != "" {
		args = append(args, "--selector", e.Selector)
	}
	if e.ReadTimeout > 0 {
		args = append(args, "--read-timeout", e.ReadTimeout.String())
	}
	return args
}

// Env is what it adds to the environment.
func (e LocalExporter) Env() []string {
	if e.Pools == "" {
		return nil
	}
	return []string{"EXPORTER_POOLS=" + e.Pools}
}

// Start runs it in procs as name (logged at procs.LogPath(name), stopped with procs) and
// waits until its /healthz answers 200; if it exits first, the error quotes its log.
func (e LocalExporter) Start(ctx context.Context, procs *process.Set, name string) (*process.Process, error) {
	p, err := procs.Start(name, e.Binary, e.Args(), e.Env()...)
	if err != nil {
		return nil, err
	}
	return p, process.WaitHealthy(ctx, p, e.HealthzURL(), nil, time.Minute)
}

// HealthzURL is its liveness endpoint (it never reads the API server).
func (e LocalExporter) HealthzURL() string { return "http://" + e.Addr + "/healthz" }

// DemandURL is where it serves the one pool's count.
func (e LocalExporter) DemandURL() string { return "http://" + e.Addr + contract.DemandPath }
