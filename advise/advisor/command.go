package advisor

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"warmpool.local/warm-pool-autoscaling-keda/history"
)

// about is --help's description and example, between the usage lines and the flags.
const about = `advise replays a team's claim history, day by day, in a model of the warm pool on EKS
Auto Mode's nodes (agent-sandbox's refill, KEDA and the HPA, Karpenter's launches and
consolidation), against every setting the program renders: fixed pools, claims plus headroom,
and the arrivals policy, rounded to nodes and with a schedule floor. It prints per pool what each
setting would have done (warm hits, claim waits, node-seconds), the one to run as pulumi config
set lines, and a verdict in one sentence. The history is a CSV with the header
pool,claim,created,deleted (or JSON lines), times in RFC 3339, or it is rebuilt from the
Prometheus that scrapes the claim exporter and agent-sandbox's controller.

Examples:
  go run ./advise --history claims.csv --timezone Europe/Berlin --plots plots/
  go run ./advise --history advise/sample-history.csv   # the shipped sample: 14 days of one pool

Flags:
`

// Main is the advise command: it reads the flags (`go run ./advise --help` lists them) from args,
// prints the advice to stdout and what is wrong to stderr, and returns the exit code: 0 advised,
// 1 the history or a file could not be read or written, 2 refused (bad flags, settings or history).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := DefaultParams()
	path := fs.String("history", "", "the claim history: CSV (header pool,claim,created,deleted) or JSON lines, times in RFC 3339 (this or --prometheus)")
	prom := addPromFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: advise --history FILE [flags]\n"+
			"   or: advise --prometheus URL --from T --to T [--pools a,b] [--step 15s] [flags]\n\n"+about)
		fs.PrintDefaults()
	}
	fs.IntVar(&p.BootSeconds, "boot-seconds", p.BootSeconds, "a sandbox's create to Ready, seconds")
	fs.IntVar(&p.SandboxesPerNode, "sandboxes-per-node", p.SandboxesPerNode, "sandboxes one node holds; 0: nodes are always there (cost is then idle warm pod-seconds)")
	fs.IntVar(&p.NodeLaunchSeconds, "node-launch-seconds", p.NodeLaunchSeconds, "a new node's launch to Ready, seconds")
	fs.DurationVar(&p.ConsolidateAfter, "consolidate-after", p.ConsolidateAfter, "the NodePool's disruption.consolidateAfter")
	fs.Float64Var(&p.WarmHitTarget, "warm-hit-target", p.WarmHitTarget, "the share of claims that should find a warm sandbox")
	fs.Float64Var(&p.NodePricePerHour, "node-price-per-hour", p.NodePricePerHour, "what a node costs per hour, for the cost in money beside node-seconds; the default is a c6a.xlarge on demand in us-east-1 with EKS Auto Mode's fee (0: node-seconds only)")
	fs.DurationVar(&p.Day, "day", p.Day, "the history is judged day by day, of this length")
	fs.StringVar(&p.Timezone, "timezone", p.Timezone, "the IANA zone the days are cut at midnight in and the schedule windows are written in, e.g. Europe/Berlin: busy hours then follow the team's clock across daylight saving (with 24 h days only)")
	fs.StringVar(&p.Current, "current", "", `the setting the pool runs now, as advise prints settings ("fixed-20", "claims + headroom 3", "arrivals, rounded to 8 per node, headroom 2"), for every pool: replayed beside the others`)
	fs.Float64Var(&p.MarginShare, "margin", p.MarginShare, "raise an autoscaled recommendation's headroom while it costs at most this share of the cheapest fixed pool at the target (0: the cheapest setting at the target)")
	lim := history.DefaultLimits
	fs.DurationVar(&lim.MaxClaim, "max-claim-duration", lim.MaxClaim, "a claim held longer is refused, naming its line (a clock that jumped would otherwise be replayed as held that long)")
	fs.DurationVar(&lim.MaxSpan, "max-history-span", lim.MaxSpan, "a history covering longer (first creation to last time recorded) is refused, naming the rows at its ends")
	jsonPath := fs.String("json", "", "also write the advice as JSON to this file")
	plotDir := fs.String("plots", "", "also draw, per pool, the settings replayed (warm hits against cost) and its busiest day, as PNG files in this directory")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	q, err := prom.query(*path, set)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("%q is not a flag; the history is --history FILE or --prometheus URL (and nothing else on the line); see --help", fs.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(stderr, "advise: %v\n", err)
		return 2
	}
	if err := p.Check(); err != nil { // before the history is read: a bad flag costs nothing
		fmt.Fprintf(stderr, "advise: %v\n", err)
		return 2
	}
	if err := lim.Check(); err != nil {
		fmt.Fprintf(stderr, "advise: --max-claim-duration and --max-history-span: %v\n", err)
		return 2
	}
	if *plotDir != "" {
		if st, err := os.Stat(*plotDir); err == nil && !st.IsDir() {
			fmt.Fprintf(stderr, "advise: --plots %s is not a directory; name a directory (it is made if missing)\n", *plotDir)
			return 2
		}
	}
	var h *history.History
	if q != nil {
		h, err = fromPrometheus(q)
	} else {
		h, err = readFile(*path, lim)
	}
	if err != nil {
		fmt.Fprintf(stderr, "advise: %v\n", err)
		return 1
	}
	advice, err := Advise(h, p)
	if err != nil {
		fmt.Fprintf(stderr, "advise: %v\n", err)
		return 2
	}
	if q != nil {
		printSource(stdout, h, q)
	}
	WriteText(stdout, advice, p)
	if *plotDir != "" {
		paths, err := WritePlots(*plotDir, advice, p)
		if err != nil {
			fmt.Fprintf(stderr, "advise: %v\n", err)
			return 1
		}
		for _, path := range paths {
			fmt.Fprintf(stdout, "wrote %s\n", path)
		}
	}
	if *jsonPath != "" {
		b, _ := json.MarshalIndent(advice, "", "  ")
		if err := os.WriteFile(*jsonPath, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "advise: %v\n", err)
			return 1
		}
	}
	return 0
}

func readFile(path string, lim history.Limits) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return history.ReadLimited(f, path, lim)
}
