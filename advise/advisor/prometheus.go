package advisor

// The history from a live cluster's Prometheus: --prometheus URL with the range
// (--from, --to), the step and the pools, instead of --history FILE. package history rebuilds the
// claims (history.FromPrometheus says how, and what it refuses).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/history"
)

// fetchTimeout bounds the reading of a Prometheus: a few range queries, in parts of 10,000 steps.
const fetchTimeout = 5 * time.Minute

// promFlags are the flags of the Prometheus source.
type promFlags struct {
	url, pools, from, to string
	step                 time.Duration
}

func addPromFlags(fs *flag.FlagSet) *promFlags {
	f := &promFlags{}
	fs.StringVar(&f.url, "prometheus", "", "read the history from the Prometheus at this URL (e.g. http://127.0.0.1:9090) instead of --history: its warmpool_active_claims and agent_sandbox_claim_creation_total, rebuilt to claims (times good to one --step)")
	fs.StringVar(&f.pools, "pools", "", "with --prometheus: the warm pools to read, comma-separated (default: every warmpool_name agent_sandbox_claim_creation_total has in the range)")
	fs.StringVar(&f.from, "from", "", "with --prometheus: the start of the range, RFC 3339 (e.g. 2026-12-01T00:00:00Z)")
	fs.StringVar(&f.to, "to", "", "with --prometheus: the end of the range, RFC 3339")
	fs.DurationVar(&f.step, "step", 15*time.Second, "with --prometheus: the step the series are read at (at least 1s, at least the scrape interval); the history's times are good to one step")
	return f
}

// query is the Prometheus query the flags ask for: nil (and no error) for a history file. set is
// the flags given on the line, to refuse the Prometheus' flags beside --history.
func (f *promFlags) query(historyPath string, set map[string]bool) (*history.Query, error) {
	switch {
	case historyPath != "" && f.url != "":
		return nil, errors.New("--history and --prometheus are two sources of the history; give one of them")
	case historyPath == "" && f.url == "":
		return nil, errors.New("--history FILE is required, or --prometheus URL with --from and --to (and nothing else on the line); see --help")
	case historyPath != "":
		for _, name := range []string{"pools", "from", "to", "step"} {
			if set[name] {
				return nil, fmt.Errorf("--%s goes with --prometheus, not --history (a file's times are its own)", name)
			}
		}
		return nil, nil
	}
	if _, err := history.PrometheusAPI(f.url); err != nil {
		return nil, fmt.Errorf("--prometheus: %v", err)
	}
	q := &history.Query{Step: f.step, Source: f.url}
	for _, t := range []struct {
		name, value string
		into        *time.Time
	}{{"from", f.from, &q.Start}, {"to", f.to, &q.End}} {
		if t.value == "" {
			return nil, fmt.Errorf("--prometheus needs --%s, an RFC 3339 time such as 2026-12-01T00:00:00Z", t.name)
		}
		v, err := time.Parse(time.RFC3339Nano, t.value)
		if err != nil {
			return nil, fmt.Errorf("--%s %q is not an RFC 3339 time such as 2026-12-01T00:00:00Z", t.name, t.value)
		}
		*t.into = v
	}
	if set["pools"] {
		for _, p := range strings.Split(f.pools, ",") {
			q.Pools = append(q.Pools, strings.TrimSpace(p))
		}
	}
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("--from, --to, --step, --pools: %v", err)
	}
	return q, nil
}

// fromPrometheus reads the history the query asks for.
func fromPrometheus(q *history.Query) (*history.History, error) {
	prom, err := history.PrometheusAPI(q.Source)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	return history.FromPrometheus(ctx, prom, *q)
}

// printSource says where a rebuilt history came from, how fine its times are, and per pool what
// the controller counted: the warm-hit share the team really got, beside the model's below.
func printSource(w io.Writer, h *history.History, q *history.Query) {
	fmt.Fprintf(w, "history: rebuilt from the Prometheus at %s, %s to %s at a %s step (times good to one step)\n",
		q.Source, h.Start.Format(time.RFC3339), h.End.Format(time.RFC3339), h.Resolution)
	for _, pool := range h.PoolNames() {
		o := h.Observed[pool]
		fmt.Fprintf(w, "  pool %s: %d claims created; the controller served %d warm, %d cold (%.1f%% warm)",
			pool, len(h.Pools[pool]), o.Warm, o.Cold, 100*o.WarmShare())
		if n := h.HeldAtStart[pool]; n > 0 {
			fmt.Fprintf(w, "; %d held from before the range, not replayed", n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
