package localcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// processSpec is one process of the control plane as a value: its name (the
// process record's, which Kill and Restart take), the command, the
// configuration files it reads, and what it is ready by. Each process's file
// holds its builder, a pure function from named settings to a processSpec
// (etcdSpec, apiServerSpec, ...), with the why of each flag beside it;
// start runs the value.
type processSpec struct {
	name   string
	binary string
	args   []string
	// env is added to this process's environment.
	env []string
	// files are written (or copied) before it starts.
	files []file
	ready readiness
}

// file is a configuration file a process reads: data, or a copy of from.
type file struct {
	path string
	data string
	from string
	mode os.FileMode
}

// readiness is what a started process is ready by: a health URL answering
// 200 (over TLS as clientUser, a certificate of the control plane's PKI, when
// named), a socket accepting connections, or neither (started is enough).
type readiness struct {
	url        string
	clientUser string
	socket     string
	timeout    time.Duration
}

// start writes the process's files and starts it in procs; it does not wait
// (waitReady does).
func (g processSpec) start(procs *process.Set) (*process.Process, error) {
	for _, f := range g.files {
		if err := f.write(); err != nil {
			return nil, fmt.Errorf("%s: %w", g.name, err)
		}
	}
	return procs.Start(g.name, g.binary, g.args, g.env...)
}

// run starts the process and waits until it is ready.
func (g processSpec) run(ctx context.Context, procs *process.Set, p *pki) error {
	proc, err := g.start(procs)
	if err != nil {
		return err
	}
	return g.waitReady(ctx, proc, p)
}

// waitReady waits for proc, started from g, to be ready by g.ready.
func (g processSpec) waitReady(ctx context.Context, proc *process.Process, p *pki) error {
	var err error
	switch r := g.ready; {
	case r.url != "":
		var tlsCfg *tls.Config
		if r.clientUser != "" {
			if tlsCfg, err = clientTLS(p, r.clientUser); err != nil {
				return err
			}
		}
		err = process.WaitHealthy(ctx, proc, r.url, tlsCfg, r.timeout)
	case r.socket != "":
		err = process.WaitListening(ctx, proc, "unix", r.socket, r.timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	return nil
}

func (f file) write() error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	data := []byte(f.data)
	if f.from != "" {
		b, err := os.ReadFile(f.from)
		if err != nil {
			return err
		}
		data = b
	}
	mode := f.mode
	if mode == 0 {
		mode = 0o644
	}
	return os.WriteFile(f.path, data, mode)
}

// runSpecs runs each process in order, each ready before the next starts.
func runSpecs(ctx context.Context, procs *process.Set, p *pki, specs []processSpec) error {
	for _, g := range specs {
		if err := g.run(ctx, procs, p); err != nil {
			return err
		}
	}
	return nil
}

// joinedNames joins the names of xs (processes, add-ons), for saying what starts.
func joinedNames[T any](xs []T, name func(T) string) string {
	names := make([]string, 0, len(xs))
	for _, x := range xs {
		names = append(names, name(x))
	}
	return strings.Join(names, ", ")
}
