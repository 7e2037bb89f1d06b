// Command advise replays a team's own claim history against the warm-pool settings the program
// can render (fixed pools, claims plus headroom, the arrivals policy with its node keys) in the
// replay model, and prints per pool each setting's warm hits, claim waits and node cost, the
// cheapest that reaches the warm-hit target on 90% of the days (every day, under 10 days) as
// `pulumi config set` lines, and a verdict in one sentence.
//
//	go run ./advise --history claims.csv [--sandboxes-per-node 8] [--node-launch-seconds 45] ...
//
// The history's format is package history's (CSV or JSON lines of pool, claim, created,
// deleted). Or it is rebuilt from a live cluster's Prometheus, times good to one step:
//
//	go run ./advise --prometheus http://127.0.0.1:9090 --from 2026-12-01T00:00:00Z --to 2026-12-15T00:00:00Z [--pools code,browser] [--step 15s]
//
// The figures are the model's (replay), held against the live runs in docs/bursts.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/warmpool/warm-pool-autoscaling-keda/history"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := DefaultParams()
	path := fs.String("history", "", "the claim history: CSV (header pool,claim,created,deleted) or JSON lines, times in RFC 3339 (this or --prometheus)")
	prom := addPromFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: advise --history FILE [flags]\n"+
			"   or: advise --prometheus URL --from T --to T [--pools a,b] [--step 15s] [flags]\n\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&p.BootSeconds, "boot-seconds", p.BootSeconds, "a sandbox's create to Ready, seconds")
	fs.IntVar(&p.SandboxesPerNode, "sandboxes-per-node", p.SandboxesPerNode, "sandboxes one node holds; 0: nodes are always there (cost is then idle warm pod-seconds)")
	fs.IntVar(&p.NodeLaunchSeconds, "node-launch-seconds", p.NodeLaunchSeconds, "a new node's launch to Ready, seconds")
	fs.DurationVar(&p.ConsolidateAfter, "consolidate-after", p.ConsolidateAfter, "the NodePool's disruption.consolidateAfter")
	fs.Float64Var(&p.WarmHitTarget, "warm-hit-target", p.WarmHitTarget, "the share of claims that should find a warm sandbox")
	fs.Float64Var(&p.NodePricePerHour, "node-price-per-hour", p.NodePricePerHour, "what a node costs per hour, to print money beside node-seconds (0: none)")
	fs.DurationVar(&p.Day, "day", p.Day, "the history is judged day by day, of this length")
	jsonPath := fs.String("json", "", "also write the advice as JSON to this file")
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
	var h *history.History
	if q != nil {
		h, err = fromPrometheus(q)
	} else {
		h, err = readFile(*path)
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
	printAdvice(stdout, advice, p)
	if *jsonPath != "" {
		b, _ := json.MarshalIndent(advice, "", "  ")
		if err := os.WriteFile(*jsonPath, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "advise: %v\n", err)
			return 1
		}
	}
	return 0
}

func readFile(path string) (*history.History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return history.Read(f, path)
}

func printAdvice(w io.Writer, advice []PoolAdvice, p Params) {
	cost := "node-s/day"
	if p.SandboxesPerNode == 0 {
		cost = "idle warm pod-s/day"
	}
	for _, a := range advice {
		fmt.Fprintf(w, "pool %s: %d claims over %d day(s), peak %d held\n", a.Pool, a.Claims, a.Days, a.Peak)
		for _, c := range a.Caveats {
			fmt.Fprintf(w, "  note: %s\n", c)
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  (fixed pools: those on the frontier, no other fixed size with more warm hits for less)")
		fmt.Fprintf(tw, "  setting\twarm hits\tdays at %g%%\twait p95\tp99\t%s", 100*p.WarmHitTarget, cost)
		if p.NodePricePerHour > 0 && p.SandboxesPerNode > 0 {
			fmt.Fprint(tw, "\tper day")
		}
		fmt.Fprintln(tw)
		for _, o := range a.Outcomes {
			if o.policy.Fixed > 0 && !onFrontier(o, a.Outcomes) && (a.Recommended == nil || o.Name != a.Recommended.Name) {
				continue
			}
			mark := ""
			if a.Recommended != nil && o.Name == a.Recommended.Name {
				mark = "  <- recommended"
			}
			fmt.Fprintf(tw, "  %s\t%.1f%%\t%d/%d\t%.1f s\t%.1f s\t%.0f", o.Name, 100*o.WarmShare, o.DaysAtTarget, o.Days, o.WaitP95.Seconds(), o.WaitP99.Seconds(), o.Cost)
			if p.NodePricePerHour > 0 && p.SandboxesPerNode > 0 {
				fmt.Fprintf(tw, "\t%.2f", o.Cost/3600*p.NodePricePerHour)
			}
			fmt.Fprintf(tw, "%s\n", mark)
		}
		tw.Flush()
		fmt.Fprintf(w, "  verdict: %s\n", a.Verdict)
		switch {
		case a.Recommended != nil && len(advice) == 1:
			fmt.Fprintln(w, "  settings:")
			for _, c := range a.Recommended.Commands() {
				fmt.Fprintf(w, "    %s\n", c)
			}
		case a.Recommended != nil:
			b, _ := json.Marshal(a.Recommended.Entry(a.Pool))
			fmt.Fprintf(w, "  its entry of the pools list: %s\n", b)
		}
		fmt.Fprintln(w)
	}
}

// onFrontier reports whether no other fixed pool has at least o's warm hits for at most its cost,
// better in one: the fixed sizes worth printing.
func onFrontier(o Outcome, all []Outcome) bool {
	for _, q := range all {
		if q.policy.Fixed > 0 && q.Name != o.Name && q.WarmShare >= o.WarmShare && q.Cost <= o.Cost && (q.WarmShare > o.WarmShare || q.Cost < o.Cost) {
			return false
		}
	}
	return true
}
