package advisor

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the advice as the advise command prints it: per pool the settings worth
// reading (Shown), the recommendation's config lines (or its entry of the pools list, with
// several pools) and the verdict.
func WriteText(w io.Writer, advice []PoolAdvice, p Params) {
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
