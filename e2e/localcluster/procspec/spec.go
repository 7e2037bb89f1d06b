// Package procspec builds each process of the control plane as a value:
// settings in, a Spec out, one file per process with the why of each flag
// beside it (etcd.go, apiserver.go, kubelet.go, ...); spec.go runs a Spec.
package procspec

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// Spec is one process of the control plane as a value: its name (the
// process record's, which Kill and Restart take), the command, the
// configuration files it reads, and what it is ready by. Each process's file
// holds its builder, a pure function from named settings to a Spec
// (Etcd, APIServer, ...), with the why of each flag beside it;
// Start runs the value.
type Spec struct {
	Name   string
	binary string
	args   []string
	// env is added to this process's environment.
	env []string
	// files are written (or copied) before it starts.
	files []file
	ready readiness
}

// Args are the process's arguments, for saying and checking what it runs with.
func (g Spec) Args() []string { return g.args }

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

// Start writes the process's files and starts it in procs; it does not wait
// (WaitReady does). A spec built before its tool was (an empty path) is
// refused, naming the process, rather than exec'd as no command.
func (g Spec) Start(procs *process.Set) (*process.Process, error) {
	if g.binary == "" {
		return nil, fmt.Errorf("%s: no binary: the spec was built before its tool (toolcache) was", g.Name)
	}
	for _, f := range g.files {
		if err := f.write(); err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name, err)
		}
	}
	return procs.Start(g.Name, g.binary, g.args, g.env...)
}

// run starts the process and waits until it is ready.
func (g Spec) Run(ctx context.Context, procs *process.Set, p *pki.PKI) error {
	proc, err := g.Start(procs)
	if err != nil {
		return err
	}
	return g.WaitReady(ctx, proc, p)
}

// waitReady waits for proc, started from g, to be ready by g.ready.
func (g Spec) WaitReady(ctx context.Context, proc *process.Process, p *pki.PKI) error {
	var err error
	switch r := g.ready; {
	case r.url != "":
		var tlsCfg *tls.Config
		if r.clientUser != "" {
			if tlsCfg, err = pki.ClientTLS(p, r.clientUser); err != nil {
				return err
			}
		}
		err = process.WaitHealthy(ctx, proc, r.url, tlsCfg, r.timeout)
	case r.socket != "":
		err = process.WaitListening(ctx, proc, "unix", r.socket, r.timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", g.Name, err)
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

// Names are the processes' names, for saying what starts.
func Names(specs []Spec) string {
	names := make([]string, 0, len(specs))
	for _, g := range specs {
		names = append(names, g.Name)
	}
	return strings.Join(names, ", ")
}

// RunAll runs each process in order, each ready before the next starts.
func RunAll(ctx context.Context, procs *process.Set, p *pki.PKI, specs []Spec) error {
	for _, g := range specs {
		if err := g.Run(ctx, procs, p); err != nil {
			return err
		}
	}
	return nil
}
