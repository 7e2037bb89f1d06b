// Command checkpins checks, before a `pulumi up`, that the two upstream artifacts the stack
// downloads on its first run exist where the program will fetch them: the kedacore/keda Helm chart
// at the pinned version (listed in the repository's index.yaml, and its archive answers) and the
// agent-sandbox release manifest (the release asset answers). It needs the internet; the GitHub
// workflow's pins job runs it on every push and pull request.
//
//	go run ./checkpins
//	go run ./checkpins -keda-chart-version "$(pulumi config get kedaChartVersion)" -agent-sandbox-version "$(pulumi config get agentSandboxVersion)"
//
// It prints one line per artifact (OK or FAIL, with the URL) and exits 1 if any is missing or
// cannot be reached.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, Checker{
		Client:      &http.Client{Timeout: 30 * time.Second},
		ChartRepo:   contract.KedaChartRepo,
		ChartName:   contract.KedaChartName,
		ManifestURL: contract.AgentSandboxManifestURL,
	}))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, c Checker) int {
	fs := flag.NewFlagSet("checkpins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chart := fs.String("keda-chart-version", contract.KedaChartVersion, "the kedaChartVersion the stack installs")
	sandbox := fs.String("agent-sandbox-version", contract.AgentSandboxRelease, "the agentSandboxVersion the stack installs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "checkpins takes no arguments, only flags (got %q)\n", fs.Args())
		return 2
	}
	results := []Result{c.KedaChart(ctx, *chart), c.AgentSandboxManifest(ctx, *sandbox)}
	failed, offline := 0, 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			if isUnreachable(r.Err) {
				offline++
			}
			fmt.Fprintf(stdout, "FAIL %s: %v\n", r.Name, r.Err)
			continue
		}
		fmt.Fprintf(stdout, "OK   %s: %s (%s)\n", r.Name, r.Detail, r.URL)
	}
	switch {
	case failed == 0:
		fmt.Fprintf(stdout, "%d/%d pinned artifacts found\n", len(results), len(results))
		return 0
	case offline == failed:
		fmt.Fprintf(stdout, "%d/%d pinned artifacts found; %d could not be looked up (no connection), so none is known to be missing\n", len(results)-failed, len(results), offline)
	default:
		fmt.Fprintf(stdout, "%d/%d pinned artifacts found\n", len(results)-failed, len(results))
	}
	return 1
}
