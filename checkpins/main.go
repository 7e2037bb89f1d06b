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
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, Checker{
		Client:      &http.Client{Timeout: 30 * time.Second},
		ChartRepo:   contract.KedaChartRepo,
		ChartName:   contract.KedaChartName,
		ManifestURL: contract.AgentSandboxManifestURL,
	}))
}

// usage is what --help prints before the flags.
const usage = `usage: go run ./checkpins [flags]

Checks, before a stack's first pulumi up, that the two upstream artifacts it downloads exist where
the program will fetch them: the kedacore/keda Helm chart at the pinned version (listed in the
chart repository's index.yaml, and its archive answers) and the agent-sandbox release manifest
(the release asset answers). Prints OK or FAIL per artifact with its URL; exits 0 when both are
found, 1 when one is missing or cannot be reached (without a connection it says so), 2 on a bad
argument. Needs the internet.

Example, for a stack that sets its own versions:
  go run ./checkpins -keda-chart-version "$(pulumi config get kedaChartVersion)" \
    -agent-sandbox-version "$(pulumi config get agentSandboxVersion)"

Flags:
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer, c Checker) int {
	fs := flag.NewFlagSet("checkpins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	chart := fs.String("keda-chart-version", contract.KedaChartVersion, "the kedaChartVersion the stack installs")
	sandbox := fs.String("agent-sandbox-version", contract.AgentSandboxRelease, "the agentSandboxVersion the stack installs")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
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
