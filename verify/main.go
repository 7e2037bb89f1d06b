// Command verify proves on a live cluster that KEDA, and only KEDA, moves the
// SandboxWarmPool's spec.replicas with SandboxClaim demand. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process exit: 0 no FAIL, 1 a FAIL, 2 refused.
func run(args []string, stdout, stderr io.Writer) int {
	out := stdout
	// With --json - the report goes to stdout, so the text goes to stderr.
	for i, a := range args {
		if a == "--json=-" || a == "-json=-" || ((a == "--json" || a == "-json") && i+1 < len(args) && args[i+1] == "-") {
			out = stderr
		}
	}
	rep := newReport(out)
	cfg, err := parseConfig(args, stderr, func(f string, a ...any) { rep.Printf(f, a...) }, pulumiOutputs)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 2
	}

	rc, src, err := restConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "verify: kubeconfig:", err)
		return 2
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 2
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(stderr, "verify:", err)
		return 2
	}
	var demand DemandReader = newProxyDemand(kube, cfg.Namespace, cfg.ExporterService, cfg.ExporterPath)
	if cfg.ExporterURL != "" {
		u := cfg.ExporterURL
		if urlPath(u) == "" {
			u = strings.TrimSuffix(u, "/") + "/demand"
		}
		demand = httpDemand{url: u, client: &http.Client{Timeout: 10 * time.Second}}
	}
	rep.Printf("cluster: %s (%s) namespace: %s pool: %s scaledobject: %s", rc.Host, src, cfg.Namespace, cfg.Pool, cfg.ScaledObject)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, stop, cfg, kube, dyn, remoteExecer{cfg: rc, kube: kube}, demand, rep, out)
}

// execute is the part of run the tests drive with fake clients: guard, the
// phases, the exit handler on every path, the summary and the JSON report.
func execute(ctx context.Context, stop func(), cfg Config, kube kubernetes.Interface, dyn dynamic.Interface,
	ex Execer, demand DemandReader, rep *Report, out io.Writer) int {
	ev, err := guardNamespace(ctx, kube, cfg.Namespace, cfg.StackLabel)
	if err != nil {
		fmt.Fprintln(out, "verify:", err)
		return 2
	}
	rep.Printf("%s", ev)

	r := newRunner(cfg, kube, dyn, ex, demand, rep)
	func() {
		// The exit handler runs even if a phase panics.
		defer func() {
			// Read before stop(): stopping the signal context cancels it too.
			interrupted := ctx.Err() != nil
			// After an interrupt, a second one should end the process at once.
			stop()
			if interrupted {
				rep.Printf("interrupted: running the exit handler (interrupt again to abandon it)")
			}
			if err := r.rest.Run(cfg.RestoreTimeout); err != nil {
				rep.Printf("exit handler: %v", err)
			}
		}()
		r.Run(ctx)
	}()

	line := rep.FinalLine()
	rep.Printf("%s", line)
	if cfg.JSONPath != "" {
		b, err := rep.JSON()
		if err == nil {
			if cfg.JSONPath == "-" {
				_, err = os.Stdout.Write(append(b, '\n'))
			} else {
				err = os.WriteFile(cfg.JSONPath, append(b, '\n'), 0o644)
			}
		}
		if err != nil {
			fmt.Fprintln(out, "verify: writing --json:", err)
			return 1
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}
