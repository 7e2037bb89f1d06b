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
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

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
	printAdvice(stdout, advice, p)
	if *plotDir != "" {
		paths, err := writePlots(*plotDir, advice, p)
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
		fmt.Fprintf(w, "  (fixed pools on the frontier from %.0f%% warm hits up; each autoscaled policy at the lowest headroom that reaches the target on %d of %d days)\n", 100*p.WarmHitTarget-frontierFrom, a.Need, a.Days)
		if a.Margin > 0 {
			fmt.Fprintf(w, "  (the margin: the recommendation is %s with %d more spare sandbox(es) all day; the cheapest setting that met the target on these %d days may just have been lucky on them, and spares are added while it still costs at most %.0f%% of the cheapest fixed pool that meets it; --margin 0 turns this off)\n", a.Lowest.Name, a.Margin, a.Days, 100*p.MarginShare)
		}
		if a.Dropped != "" {
			fmt.Fprintf(w, "  (recommended without the schedule %s: replayed without it, the setting reaches the target on as many days, with as many warm hits, for no more cost; a floor there buys nothing, and its config lines would only cost)\n", a.Dropped)
		}
		fmt.Fprintf(tw, "  setting\twarm hits\tdays at %g%%\twait p95\tp99\t%s", 100*p.WarmHitTarget, cost)
		if p.NodePricePerHour > 0 && p.SandboxesPerNode > 0 {
			fmt.Fprint(tw, "\t$ per day")
		}
		fmt.Fprintln(tw)
		for _, o := range a.Shown() {
			mark := ""
			switch {
			case a.Recommended != nil && o.Name == a.Recommended.Name:
				mark = "  <- recommended"
			case a.Lowest != nil && o.Name == a.Lowest.Name:
				mark = fmt.Sprintf("  <- the cheapest at the target on %d of %d days", a.Need, a.Days)
			}
			fmt.Fprintf(tw, "  %s\t%.1f%%\t%d/%d\t%.1f s\t%.1f s\t%.0f", o.Name, 100*o.WarmShare, o.DaysAtTarget, o.Days, o.WaitP95.Seconds(), o.WaitP99.Seconds(), o.Cost)
			if p.NodePricePerHour > 0 && p.SandboxesPerNode > 0 {
				fmt.Fprintf(tw, "\t%.2f", o.Cost/3600*p.NodePricePerHour)
			}
			fmt.Fprintf(tw, "%s\n", mark)
		}
		tw.Flush()
		if p.NodePricePerHour > 0 && p.SandboxesPerNode > 0 {
			price := "your --node-price-per-hour"
			if p.NodePricePerHour == DefaultNodePricePerHour {
				price = "a c6a.xlarge on demand in us-east-1 with EKS Auto Mode's fee; --node-price-per-hour sets yours"
			}
			fmt.Fprintf(w, "  ($ per day at $%g a node-hour: %s)\n", p.NodePricePerHour, price)
		}
		if len(a.ClockShifts) > 0 {
			var shifts []string
			for _, c := range a.ClockShifts {
				shifts = append(shifts, fmt.Sprintf("%s: %.1f%%, %d/%d days", shiftWords(c.Shift, p.Day), 100*c.WarmShare, c.DaysAtTarget, a.Days))
			}
			fmt.Fprintf(w, "  the recommendation's schedule is set on the hours this history was busy; with the same demand at other hours it gives (warm hits, days at %g%%): %s\n", 100*p.WarmHitTarget, strings.Join(shifts, "; "))
		}
		if c := a.Current; c != nil {
			fmt.Fprintf(w, "  now: %s: %.1f%% warm hits in the model, %d/%d days at %g%%, %.0f %s", c.Name, 100*c.WarmShare, c.DaysAtTarget, c.Days, 100*p.WarmHitTarget, c.Cost, cost)
			if r := a.Recommended; r != nil && c.Cost > 0 {
				fmt.Fprintf(w, "; the recommendation costs %.0f%% of it", 100*r.Cost/c.Cost)
			}
			fmt.Fprintln(w)
			if o := a.Observed; o != nil {
				fmt.Fprintf(w, "  the model against what you got: it gives %s %.1f%% warm hits, the controller counted %.1f%% (%d warm, %d cold): %+.1f points\n",
					c.Name, 100*c.WarmShare, 100*o.WarmShare(), o.Warm, o.Cold, 100*(c.WarmShare-o.WarmShare()))
			}
		}
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

// frontierFrom: fixed pools are printed from this many points below the target up.
const frontierFrom = 10

// Shown are the settings worth printing: the fixed pools on the frontier near the target, each
// autoscaled ladder at its lowest level at the target (its highest replayed when none is), and
// the recommendation.
func (a PoolAdvice) Shown() []Outcome {
	var out []Outcome
	var fixedAll []Outcome
	lowest := map[string]Outcome{}
	var order []string
	for _, o := range a.Outcomes {
		if o.Margin {
			continue // the recommendation is shown; the steps to it are in --json
		}
		if o.policy.Fixed > 0 {
			fixedAll = append(fixedAll, o)
			continue
		}
		cur, seen := lowest[o.Ladder]
		if !seen {
			order = append(order, o.Ladder)
		}
		reaches := o.DaysAtTarget >= a.Need
		switch {
		case !seen,
			reaches && (cur.DaysAtTarget < a.Need || o.Level < cur.Level),
			!reaches && cur.DaysAtTarget < a.Need && o.Level > cur.Level:
			lowest[o.Ladder] = o
		}
	}
	target := a.Recommended
	for _, o := range fixedAll {
		if 100*o.WarmShare >= 100*a.Target-frontierFrom && onFrontier(o, fixedAll) {
			out = append(out, o)
		}
	}
	for _, name := range order {
		out = append(out, lowest[name])
	}
	if target != nil && !slices.ContainsFunc(out, func(o Outcome) bool { return o.Name == target.Name }) {
		out = append(out, *target) // a step of the margin, or a setting left without its dead schedule
	}
	return out
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

// shiftWords says a shift of the demand in hours of the day (of a 24 h day when the days are
// shorter or longer).
func shiftWords(by, day time.Duration) string {
	hours := int(math.Round(float64(by) * 24 / float64(day)))
	when := "later"
	if hours < 0 {
		hours, when = -hours, "earlier"
	}
	if day == 24*time.Hour {
		return fmt.Sprintf("%d h %s", hours, when)
	}
	return fmt.Sprintf("%s %s (%d h of a 24 h day)", time.Duration(math.Abs(float64(by))), when, hours)
}
