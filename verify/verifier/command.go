// Package verifier is what `go run ./verify` runs: it proves on a live cluster that KEDA, and
// only KEDA, moves the SandboxWarmPool's spec.replicas with SandboxClaim demand (verify/README.md
// says what each phase checks). Run takes verify's command line and a context; Main is the
// command, ended by SIGINT or SIGTERM. The report is package report's.
package verifier

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

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// Main is the verify command: Run with an interrupt (SIGINT, SIGTERM) as the end of the run;
// a second interrupt ends the process at once. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr, func() (context.Context, func()) {
		return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	})
}

// Run is verify's run with its command line (flags as `go run ./verify --help` lists them): the
// text to stdout (to stderr with --json -, when the report goes to stdout), refusals to stderr.
// Ending ctx ends the run as an interrupt does: the exit handler restores what it changed. It
// returns verify's exit code: 0 no FAIL, 1 a FAIL (or interrupted), 2 refused.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr, func() (context.Context, func()) { return context.WithCancel(ctx) })
}

// run is Run and Main. The run's context is made (and, for Main, the signals caught) only once the
// clients are made, as before it: an interrupt while the flags and outputs are read ends the
// process at once.
func run(args []string, stdout, stderr io.Writer, runContext func() (context.Context, func())) int {
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
		return refuse(rep, stderr, stdout, jsonPath, err.Error())
	}

	rc, src, err := restConfig(cfg)
	if err != nil {
		return refuse(rep, stderr, stdout, jsonPath, "kubeconfig: "+err.Error())
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return refuse(rep, stderr, stdout, jsonPath, err.Error())
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return refuse(rep, stderr, stdout, jsonPath, err.Error())
	}
	// Each pool's answer: through the API server's service proxy to the exporter's Service in
	// the stack namespace, at the pool's path; or directly with --exporter-url.
	demands := func(t PoolTarget) DemandReader {
		if cfg.ExporterURL != "" {
			return httpDemand{url: directDemandURL(cfg.ExporterURL, t), client: &http.Client{Timeout: 10 * time.Second}}
		}
		return newProxyDemand(kube, cfg.stackNamespace(), cfg.ExporterService, t.ExporterPath)
	}
	if all := cfg.allTargets(); len(all) == 1 {
		rep.Printf("cluster: %s (%s) namespace: %s pool: %s scaledobject: %s", rc.Host, src, cfg.Namespace, cfg.Pool, cfg.ScaledObject)
	} else {
		rep.Printf("cluster: %s (%s) stack namespace: %s (exporter service %s); %d pools: %s; this run drives %s",
			rc.Host, src, cfg.stackNamespace(), cfg.ExporterService, len(all), describeTargets(all), targetNames(cfg.targets()))
	}

	ctx, stop := runContext()
	defer stop()
	return execute(ctx, stop, cfg, kube, dyn, remoteExecer{cfg: rc, kube: kube}, demands, rep, out, stdout)
}

// describeTargets names each pool's objects: "code (namespace agents-code, scaledobject code, /demand/code)".
func describeTargets(ts []PoolTarget) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s (namespace %s, scaledobject %s, /%s)", t.Name, t.Namespace, t.ScaledObject, t.ExporterPath))
	}
	return strings.Join(parts, ", ")
}

func targetNames(ts []PoolTarget) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.Name)
	}
	return strings.Join(parts, ", ")
}

// guardedNamespaces are the namespaces the run must find labelled for this stack: every pool's
// and the stack's (the exporter's), each once, in order.
func guardedNamespaces(cfg Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, ns := range append(func() []string {
		var n []string
		for _, t := range cfg.allTargets() {
			n = append(n, t.Namespace)
		}
		return n
	}(), cfg.stackNamespace()) {
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

// execute is the part of run the tests drive with fake clients: guard, the
// phases, the exit handler on every path, the summary and the JSON report
// (--json - to stdout).
func execute(ctx context.Context, stop func(), cfg Config, kube kubernetes.Interface, dyn dynamic.Interface,
	ex Execer, demands func(PoolTarget) DemandReader, rep *report.Report, out, stdout io.Writer) int {
	// Every namespace first: a refusal touches nothing in any of them.
	var evs []string
	for _, ns := range guardedNamespaces(cfg) {
		ev, err := guardNamespace(ctx, kube, ns, cfg.StackLabel, cfg.WithoutStackLabel)
		if err != nil {
			return refuse(rep, out, stdout, cfg.JSONPath, err.Error())
		}
		evs = append(evs, ev)
	}
	for _, ev := range evs {
		rep.Printf("%s", ev)
	}

	all := cfg.allTargets()
	several := len(all) > 1
	var runners []*Runner
	for i, t := range cfg.targets() {
		runners = append(runners, newPoolRunner(cfg.forPool(t), kube, dyn, ex, demands(t), rep.ForPool(t.Name, t.Namespace, several, i == 0)))
	}
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
			for _, r := range runners {
				if err := r.rest.Run(cfg.RestoreTimeout); err != nil {
					rep.Printf("exit handler: %v", err)
				}
			}
		}()
		runPoolPhases(ctx, cfg, runners, rep)
		if cfg.Phase != "demand" && ctx.Err() == nil {
			crossPool(ctx, cfg, runners, all, func(t PoolTarget) *Runner {
				// A pool this run only watches: read, never written, and its checks not reported.
				return newPoolRunner(cfg.forPool(t), kube, dyn, ex, demands(t), newReport(io.Discard).ForPool(t.Name, t.Namespace, false, false))
			}, rep)
		}
		if ctx.Err() != nil {
			rep.Fail("run", "the run completed", fmt.Sprintf("interrupted (%v) before every phase ran; the exit handler restores what this run changed", context.Cause(ctx)))
		}
	}()

	line := rep.FinalLine()
	rep.Printf("%s", line)
	code := 0
	if !rep.OK() {
		code = 1
	}
	rep.ExitCode = code
	if err := writeJSON(rep, cfg.JSONPath, stdout); err != nil {
		fmt.Fprintln(out, "verify: writing --json:", err)
		return 1
	}
	return code
}

// refuse ends a run that touched nothing: exit 2, the reason printed to out
// and, with --json, written as the report (refused, exitCode 2, no checks).
func refuse(rep *report.Report, out, stdout io.Writer, jsonPath, why string) int {
	fmt.Fprintln(out, "verify:", why)
	rep.Refused, rep.ExitCode = why, 2
	if err := writeJSON(rep, jsonPath, stdout); err != nil {
		fmt.Fprintln(out, "verify: writing --json:", err)
	}
	return 2
}

// writeJSON writes the report to path ("-" = stdout, "" = nowhere).
func writeJSON(rep *report.Report, path string, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	b, err := rep.JSON()
	if err != nil {
		return err
	}
	if path == "-" {
		_, err = stdout.Write(append(b, '\n'))
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
