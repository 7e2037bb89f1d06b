package history

// The second source of a history: a live cluster's Prometheus. A Prometheus
// keeps no claim's life, only two series per pool, so the history is rebuilt from them:
//
//   - warmpool_active_claims{pool,namespace}, the claim exporter's gauge (exporter/server.go):
//     the claims held. Sampled at every step of the range (query_range), the last sample within
//     the step (last_over_time over one step, so that a missing scrape shows as a gap instead of
//     being filled by Prometheus' five-minute lookback); the exporter's replicas read the same
//     claims, so their series are taken once per pool and namespace (max) and the namespaces
//     summed.
//   - agent_sandbox_claim_creation_total{warmpool_name,launch_type,...}, the agent-sandbox
//     controller's counter (monitoring/rules.go): the claims created. Read raw, series by
//     series, at the same steps; a series' increase over a step is its difference, or its whole
//     value when it dropped (a counter reset: the controller restarted). A series that first
//     appears after the pool's first covered step counts its whole value as created in the step
//     it appears (a restarted controller's new series, or a label set's first claim: the series
//     only exists from its first increment). The increases are summed over every label but the
//     pool: launch_type too, whose "warm" and "cold" are also kept apart as the warm-hit share the
//     team really got (History.Observed).
//
// Per pool and step (t-step, t]: created = the counter's increase; deleted = created minus the
// change of the held count. The step's creations are placed evenly inside it (the i-th of n at
// t-step + (i+½)/n·step), its deletions likewise, and a deletion ends the oldest claim still held
// (first in, first out; never before that claim's creation). So every creation and deletion is in
// the step it happened in, and the held count is the gauge's at every step: the times are good to
// one step, no finer. Which claim ended is not in the two series: FIFO pairs the ends with the
// oldest claims, so a claim's lifetime is that pairing's, not its own; what the replay reads from
// a history (when claims came, how many were held) does not depend on the pairing. The claims held
// at the range's start were created before it: they are not in the history (their creation was
// not seen), only counted (History.HeldAtStart), and they are the first to end.
//
// FromPrometheus refuses, naming what is wrong, rather than guess: an unreachable Prometheus, a
// pool without either series, a series that does not cover the range (more than two steps
// missing at its start or end, or a gap of more than two steps; up to two are bridged: the held
// count carried, the counter's increase counted when it is seen again), and series that disagree
// for longer than a scrape's skew (fifo: a held count that the claims created and deleted cannot
// give for more than two steps in a row). The exporter's pool
// name must be the warm pool's name (the program names both alike); an exporter entry counting
// claims the warm pool did not create makes the series disagree, and is refused so.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// The series a history is rebuilt from, and the labels that name the pool in each.
const (
	HeldMetric       = "warmpool_active_claims"
	HeldPoolLabel    = "pool"
	CreatedMetric    = "agent_sandbox_claim_creation_total"
	CreatedPoolLabel = "warmpool_name"
	LaunchTypeLabel  = "launch_type"
)

// MinStep is the finest step: Prometheus' scrapes are seconds apart at best.
const MinStep = time.Second

// maxPoints is how many steps one query_range asks for: Prometheus refuses more than 11,000
// points per series, so a long range is read in parts.
const maxPoints = 10000

// bridged is the most steps in a row a series may miss: more is a gap, refused.
const bridged = 2

// Query is what FromPrometheus reads: the pools (every warmpool_name the counter has in the
// range when none is named), the range, and the step its times are rebuilt to.
type Query struct {
	Pools      []string
	Start, End time.Time
	Step       time.Duration
	// Source names the Prometheus in messages (its URL).
	Source string
}

// Launches are a pool's claims by how they were served, as the controller counted them:
// adopting a warm sandbox, or waiting for a cold one.
type Launches struct{ Warm, Cold int }

// WarmShare is the share of the claims that found a warm sandbox (0 without claims).
func (l Launches) WarmShare() float64 {
	if l.Warm+l.Cold == 0 {
		return 0
	}
	return float64(l.Warm) / float64(l.Warm+l.Cold)
}

// Check refuses a step below MinStep and a range of less than one step, before anything is asked.
func (q Query) Check() error {
	switch {
	case q.Step < MinStep:
		return fmt.Errorf("the step is %s; it must be at least %s (a scrape interval, e.g. 15s)", q.Step, MinStep)
	case q.Start.IsZero() || q.End.IsZero():
		return errors.New("the range needs a start and an end (RFC 3339 times)")
	case !q.End.After(q.Start):
		return fmt.Errorf("the range %s to %s is empty: the end must be after the start", q.Start.Format(time.RFC3339), q.End.Format(time.RFC3339))
	case q.End.Sub(q.Start) < q.Step:
		return fmt.Errorf("the range %s to %s is shorter than one step (%s)", q.Start.Format(time.RFC3339), q.End.Format(time.RFC3339), q.Step)
	}
	for _, p := range q.Pools {
		if strings.TrimSpace(p) == "" {
			return errors.New("a pool name is empty; name each pool (its warmpool_name), or none for every pool")
		}
	}
	return nil
}

// PrometheusAPI is the HTTP API client of the Prometheus at address (http:// or https://).
func PrometheusAPI(address string) (v1.API, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not a Prometheus URL; give its address, e.g. http://prometheus.monitoring:9090", address)
	}
	c, err := api.NewClient(api.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("the Prometheus at %s: %v", address, err)
	}
	return v1.NewAPI(c), nil
}

// FromPrometheus rebuilds the pools' claim history over the range from the Prometheus behind
// prom (see the top of this file for how, and what it refuses). The history's Start and End are
// the range's first and last step; its Resolution is the step.
func FromPrometheus(ctx context.Context, prom v1.API, q Query) (*History, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	src := q.Source
	if src == "" {
		src = "the Prometheus"
	} else {
		src = "the Prometheus at " + src
	}
	failed := func(what string, err error) error {
		var apiErr *v1.Error
		if !errors.As(err, &apiErr) {
			return fmt.Errorf("cannot reach %s (%s): %v; check the URL and that it answers (e.g. `kubectl -n monitoring port-forward svc/prometheus 9090` and --prometheus http://127.0.0.1:9090)", src, what, err)
		}
		return fmt.Errorf("%s refused %s: %v", src, what, err)
	}
	last := q.Start.Add(q.End.Sub(q.Start) / q.Step * q.Step)
	pools := q.Pools
	if len(pools) == 0 {
		names, _, err := prom.LabelValues(ctx, CreatedPoolLabel, []string{CreatedMetric}, q.Start, last)
		if err != nil {
			return nil, failed("the list of warm pools", err)
		}
		for _, n := range names {
			if n != "" {
				pools = append(pools, string(n))
			}
		}
		if len(pools) == 0 {
			return nil, fmt.Errorf("%s has no %s series with a %s label between %s and %s: is the agent-sandbox controller scraped? Name the pools with --pools, or pick a range where claims were made",
				src, CreatedMetric, CreatedPoolLabel, q.Start.Format(time.RFC3339), last.Format(time.RFC3339))
		}
	}
	sort.Strings(pools)
	alt := make([]string, len(pools))
	for i, p := range pools {
		alt[i] = regexp.QuoteMeta(p)
	}
	re := strconv.Quote(strings.Join(alt, "|"))
	window := fmt.Sprintf("[%dms]", q.Step.Milliseconds())
	heldQ := fmt.Sprintf("sum by (%s) (max by (%s, namespace, exported_namespace) (last_over_time(%s{%s=~%s}%s)))",
		HeldPoolLabel, HeldPoolLabel, HeldMetric, HeldPoolLabel, re, window)
	createdQ := fmt.Sprintf("last_over_time(%s{%s=~%s}%s)", CreatedMetric, CreatedPoolLabel, re, window)
	var held, created model.Matrix
	for _, part := range []struct {
		query string
		into  *model.Matrix
	}{{heldQ, &held}, {createdQ, &created}} {
		m, err := queryRange(ctx, prom, part.query, q.Start, last, q.Step)
		if err != nil {
			return nil, failed(fmt.Sprintf("the query %s", part.query), err)
		}
		*part.into = m
	}
	q.Pools = pools
	h, err := Reconstruct(q, held, created)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return h, nil
}

// queryRange reads the query at every step from start to end, in parts of at most maxPoints
// steps, the parts' series joined by their labels.
func queryRange(ctx context.Context, prom v1.API, query string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	byLabels := map[model.Fingerprint]*model.SampleStream{}
	var order []model.Fingerprint
	for from := start; !from.After(end); from = from.Add(maxPoints * step) {
		to := from.Add((maxPoints - 1) * step)
		if to.After(end) {
			to = end
		}
		v, _, err := prom.QueryRange(ctx, query, v1.Range{Start: from, End: to, Step: step})
		if err != nil {
			return nil, err
		}
		m, ok := v.(model.Matrix)
		if !ok {
			return nil, fmt.Errorf("the answer is a %s, not a range of samples", v.Type())
		}
		for _, s := range m {
			fp := s.Metric.Fingerprint()
			if byLabels[fp] == nil {
				byLabels[fp] = &model.SampleStream{Metric: s.Metric}
				order = append(order, fp)
			}
			byLabels[fp].Values = append(byLabels[fp].Values, s.Values...)
		}
	}
	out := make(model.Matrix, 0, len(order))
	for _, fp := range order {
		out = append(out, byLabels[fp])
	}
	return out, nil
}

// steps is one pool's series on the range's grid: a value per step, and whether it had one.
type steps struct {
	v       []float64
	present []bool
}

func newSteps(n int) steps { return steps{v: make([]float64, n), present: make([]bool, n)} }

// Reconstruct rebuilds q.Pools' history from the two series as query_range returns them at
// q.Step from q.Start: held, warmpool_active_claims labelled by pool (one series per pool, or
// several summed); created, agent_sandbox_claim_creation_total's raw series labelled by
// warmpool_name and launch_type. It is FromPrometheus without the Prometheus.
func Reconstruct(q Query, held, created model.Matrix) (*History, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if len(q.Pools) == 0 {
		return nil, errors.New("no pool to rebuild: name at least one")
	}
	n := int(q.End.Sub(q.Start)/q.Step) + 1
	last := q.Start.Add(time.Duration(n-1) * q.Step)
	at := func(k int) time.Time { return q.Start.Add(time.Duration(k) * q.Step) }
	index := func(ts model.Time) (int, bool) {
		d := ts.Time().Sub(q.Start)
		k := int((d + q.Step/2) / q.Step)
		return k, d >= -q.Step/2 && k < n
	}
	want := map[string]bool{}
	for _, p := range q.Pools {
		want[p] = true
	}
	heldBy := map[string]*steps{}
	for _, s := range held {
		p := string(s.Metric[HeldPoolLabel])
		if !want[p] {
			continue
		}
		if heldBy[p] == nil {
			st := newSteps(n)
			heldBy[p] = &st
		}
		for _, v := range s.Values {
			if k, ok := index(v.Timestamp); ok {
				heldBy[p].v[k] += float64(v.Value)
				heldBy[p].present[k] = true
			}
		}
	}
	type counter struct {
		launch string
		steps
	}
	createdBy := map[string][]counter{}
	for _, s := range created {
		p := string(s.Metric[CreatedPoolLabel])
		if !want[p] {
			continue
		}
		c := counter{launch: string(s.Metric[LaunchTypeLabel]), steps: newSteps(n)}
		for _, v := range s.Values {
			if k, ok := index(v.Timestamp); ok {
				c.v[k], c.present[k] = float64(v.Value), true
			}
		}
		createdBy[p] = append(createdBy[p], c)
	}

	h := &History{Pools: map[string][]Claim{}, Start: q.Start, End: last, Resolution: q.Step,
		Observed: map[string]Launches{}, HeldAtStart: map[string]int{}}
	pools := append([]string(nil), q.Pools...)
	sort.Strings(pools)
	for _, pool := range pools {
		hs := heldBy[pool]
		if hs == nil {
			return nil, fmt.Errorf("pool %s: no %s series with %s=%q between %s and %s; is the claim exporter scraped, and does its entry for the pool have the warm pool's name? (the label it looked for is %s)",
				pool, HeldMetric, HeldPoolLabel, pool, q.Start.Format(time.RFC3339), last.Format(time.RFC3339), HeldPoolLabel)
		}
		cs := createdBy[pool]
		if len(cs) == 0 {
			return nil, fmt.Errorf("pool %s: no %s series with %s=%q between %s and %s; is the agent-sandbox controller scraped, and is %q the SandboxWarmPool's name? (the label it looked for is %s)",
				pool, CreatedMetric, CreatedPoolLabel, pool, q.Start.Format(time.RFC3339), last.Format(time.RFC3339), pool, CreatedPoolLabel)
		}
		covered := newSteps(n)
		for _, c := range cs {
			for k := range c.present {
				covered.present[k] = covered.present[k] || c.present[k]
			}
		}
		for _, s := range []struct {
			what    string
			present []bool
		}{
			{fmt.Sprintf("%s{%s=%q}", HeldMetric, HeldPoolLabel, pool), hs.present},
			{fmt.Sprintf("%s{%s=%q}", CreatedMetric, CreatedPoolLabel, pool), covered.present},
		} {
			if err := covers(s.present, at, q.Step, pool, s.what); err != nil {
				return nil, err
			}
		}

		// The held count at each step; a missing step carries the last (or, at the start, the first).
		count := make([]int, n)
		first := -1
		for k := 0; k < n; k++ {
			if hs.present[k] {
				count[k] = int(math.Round(hs.v[k]))
				if first < 0 {
					for j := 0; j < k; j++ {
						count[j] = count[k]
					}
					first = k
				}
			} else if k > 0 {
				count[k] = count[k-1]
			}
		}
		// The claims created in each step (t[k-1], t[k]], counter resets and new series handled.
		made := make([]int, n)
		var launches Launches
		firstCovered := 0
		for !covered.present[firstCovered] {
			firstCovered++
		}
		for _, c := range cs {
			prev, seen := 0.0, false
			for k := 0; k < n; k++ {
				if !c.present[k] {
					continue
				}
				inc := 0.0
				switch {
				case !seen && k > firstCovered:
					inc = c.v[k] // a series born inside the range counts from zero
				case !seen:
					// the baseline: what was counted before the range
				case c.v[k] >= prev:
					inc = c.v[k] - prev
				default:
					inc = c.v[k] // a reset: the counter started again from zero
				}
				prev, seen = c.v[k], true
				d := int(math.Round(inc))
				made[k] += d
				switch c.launch {
				case "warm":
					launches.Warm += d
				case "cold":
					launches.Cold += d
				}
			}
		}
		claims, err := fifo(pool, count, made, at, q.Step)
		if err != nil {
			return nil, err
		}
		if len(claims) == 0 {
			return nil, fmt.Errorf("pool %s: no claims were created between %s and %s (%s did not rise); leave the pool out (--pools) or pick a range with claims",
				pool, q.Start.Format(time.RFC3339), last.Format(time.RFC3339), CreatedMetric)
		}
		h.Pools[pool] = claims
		h.Observed[pool] = launches
		h.HeldAtStart[pool] = count[0]
	}
	return h, nil
}

// covers refuses a series that misses more than bridged steps at the range's start or end, or
// in a row anywhere, saying which part of the range it covers.
func covers(present []bool, at func(int) time.Time, step time.Duration, pool, what string) error {
	n := len(present)
	first, lastK := -1, -1
	for k, ok := range present {
		if ok {
			if first < 0 {
				first = k
			}
			lastK = k
		}
	}
	asked := fmt.Sprintf("%s to %s", at(0).Format(time.RFC3339), at(n-1).Format(time.RFC3339))
	if first < 0 {
		return fmt.Errorf("pool %s: %s has no sample in the range %s asked (the label it looked for: %s)", pool, what, asked, what)
	}
	if first > bridged || lastK < n-1-bridged {
		return fmt.Errorf("pool %s: %s covers only %s to %s of the range %s asked (a partial range: more than %d steps of %s missing at its %s); ask for --from %s --to %s, or a range the series covers",
			pool, what, at(first).Format(time.RFC3339), at(lastK).Format(time.RFC3339), asked, bridged, step, map[bool]string{true: "start", false: "end"}[first > bridged],
			at(first).Format(time.RFC3339), at(lastK).Format(time.RFC3339))
	}
	for k := first; k <= lastK; {
		if present[k] {
			k++
			continue
		}
		j := k
		for !present[j] {
			j++
		}
		if j-k > bridged {
			return fmt.Errorf("pool %s: %s has no sample from %s to %s (%d steps of %s; at most %d are bridged): it covers %s to %s and %s to %s of the range %s asked; ask for one of those",
				pool, what, at(k).Format(time.RFC3339), at(j-1).Format(time.RFC3339), j-k, step, bridged,
				at(first).Format(time.RFC3339), at(k-1).Format(time.RFC3339), at(j).Format(time.RFC3339), at(lastK).Format(time.RFC3339), asked)
		}
		k = j
	}
	return nil
}

// skewSteps: the exporter's read and the controller's counter are scraped at different moments,
// so one can be ahead of the other by a claim or two for a step; the two may disagree for up to
// this many steps in a row (as many as a gap that is bridged), no longer.
const skewSteps = 2

// fifo turns the held count and the claims created at each step into claims: the step's
// creations evenly inside it, its deletions evenly too, each ending the oldest claim held. The
// claims held at the first step are held from before the range: they end first, and are not
// returned.
//
// The claims deleted by step k are the claims created by then less the change of the held count,
// D[k]. Where the held count runs ahead of the counter (a scrape between the two), D dips for a
// step and comes back: the deletions used are the least D within skewSteps ahead (never below
// 0), so a deletion is late by at most the skew, never undone. What is refused: a held count
// below zero, and the held count the claims rebuild differing from the gauge's for more than
// skewSteps steps in a row (the two series disagree: an exporter entry counting claims the pool
// did not create, or a counter that lost its increments).
func fifo(pool string, count, made []int, at func(int) time.Time, step time.Duration) ([]Claim, error) {
	n := len(count)
	created := make([]int, n) // cumulative, from the first step
	for k := 0; k < n; k++ {
		if count[k] < 0 {
			return nil, fmt.Errorf("pool %s at %s: %s is %d, below zero: inconsistent data; pick a range without that step", pool, at(k).Format(time.RFC3339), HeldMetric, count[k])
		}
		if k > 0 {
			created[k] = created[k-1] + made[k]
		}
	}
	deleted := make([]int, n) // cumulative, skew-tolerant
	for k := 0; k < n; k++ {
		least := math.MaxInt
		for j := k; j < n && j <= k+skewSteps; j++ {
			least = min(least, created[j]-(count[j]-count[0]))
		}
		deleted[k] = max(least, 0)
	}
	run := 0
	for k := 1; k < n; k++ {
		if deleted[k] < deleted[k-1] {
			return nil, fmt.Errorf("pool %s at %s: the claims held rose from %d to %d while %d were created (%s) and the counter did not catch up within %d steps: the two series disagree, inconsistent data (does the exporter's entry count claims the warm pool did not create, or were the two scraped far apart?); pick a range without that step",
				pool, at(k).Format(time.RFC3339), count[k-1], count[k], made[k], CreatedMetric, skewSteps)
		}
		if count[0]+created[k]-deleted[k] != count[k] {
			run++
		} else {
			run = 0
		}
		if run > skewSteps {
			j := k - skewSteps
			return nil, fmt.Errorf("pool %s from %s: %s reads %d but the claims created and deleted leave %d, for more than %d steps in a row: the two series disagree, inconsistent data (does the exporter's entry count claims the warm pool did not create, or did the controller's counter lose increments?); pick a range without those steps",
				pool, at(j).Format(time.RFC3339), HeldMetric, count[j], count[0]+created[j]-deleted[j], skewSteps)
		}
	}
	var claims []Claim
	queue := make([]int, count[0]) // indices into claims, oldest first; -1: held from before the range
	for i := range queue {
		queue[i] = -1
	}
	for k := 1; k < n; k++ {
		from := at(k - 1)
		c := made[k]
		for j := 0; j < c; j++ {
			claims = append(claims, Claim{Pool: pool, Name: fmt.Sprintf("%s-%06d", pool, len(claims)+1),
				Created: from.Add(time.Duration(float64(step) * (float64(j) + 0.5) / float64(c)))})
			queue = append(queue, len(claims)-1)
		}
		d := deleted[k] - deleted[k-1]
		if d > len(queue) { // cannot happen with deleted <= created - (count - count[0]) and count >= 0; kept as a guard
			return nil, fmt.Errorf("pool %s at %s: %d claims would be deleted but only %d are held: inconsistent data; pick a range without that step",
				pool, at(k).Format(time.RFC3339), d, len(queue))
		}
		for i := 0; i < d; i++ {
			end := from.Add(time.Duration(float64(step) * (float64(i) + 0.5) / float64(d)))
			if ci := queue[i]; ci >= 0 {
				claims[ci].Deleted = later(end, claims[ci].Created)
			}
		}
		queue = queue[d:]
	}
	return claims, nil
}
