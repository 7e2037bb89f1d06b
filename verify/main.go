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
	// Read before parsing, so a refusal of the flags themselves is reported too.
	jsonPath := jsonPathFromArgs(args)
	// With --json - the report goes to stdout, so the text goes to stderr.
	if jsonPath == "-" {
		out = stderr
	}
	rep := newReport(out)
	cfg, err := parseConfig(args, stderr, func(f string, a ...any) { rep.Printf(f, a...) }, pulumiOutputs)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return refuse(rep, stderr, jsonPath, err.Error())
	}

	rc, src, err := restConfig(cfg)
	if err != nil {
		return refuse(rep, stderr, jsonPath, "kubeconfig: "+err.Error())
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return refuse(rep, stderr, jsonPath, err.Error())
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return refuse(rep, stderr, jsonPath, err.Error())
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
	ev, err := guardNamespace(ctx, kube, cfg.Namespace, cfg.StackLabel, cfg.WithoutStackLabel)
	if err != nil {
		return refuse(rep, out, cfg.JSONPath, err.Error())
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
	code := 0
	if !rep.OK() {
		code = 1
	}
	rep.ExitCode = code
	if err := writeJSON(rep, cfg.JSONPath); err != nil {
		fmt.Fprintln(out, "verify: writing --json:", err)
		return 1
	}
	return code
}

// refuse ends a run that touched nothing: exit 2, the reason printed and,
// with --json, written as the report (refused, exitCode 2, no checks).
func refuse(rep *Report, out io.Writer, jsonPath, why string) int {
	fmt.Fprintln(out, "verify:", why)
	rep.Refused, rep.ExitCode = why, 2
	if err := writeJSON(rep, jsonPath); err != nil {
		fmt.Fprintln(out, "verify: writing --json:", err)
	}
	return 2
}

// writeJSON writes the report to path ("-" = stdout, "" = nowhere).
func writeJSON(rep *Report, path string) error {
	if path == "" {
		return nil
	}
	b, err := rep.JSON()
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// boolFlags take no separate value argument.
var boolFlags = map[string]bool{"require-exec": true, "down-stepwise": true, "without-stack-label": true, "help": true, "h": true}

// jsonPathFromArgs finds --json's value the way the flag package would
// (-json/--json, "=" or the next argument, up to "--" or the first
// non-flag), so a run refused for its flags can still write its report.
func jsonPathFromArgs(args []string) string {
	path := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "json" {
			// Its value, unless it is a switch or the next word is a flag
			// (an unknown flag stops the parse; it may take no value).
			if !hasVal && !boolFlags[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		if hasVal {
			path = val
		} else if i+1 < len(args) {
			path = args[i+1]
			i++
		}
	}
	return path
}
