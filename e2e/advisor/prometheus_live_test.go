// Package advisor_test holds advise's reading of a real Prometheus (built by the control plane's
// tool cache, which the product's module does not require) to a generated history.
package advisor_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/advise/advisor"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/history"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// liveStep is the scrape interval the backfilled series have, and the step they are read at.
const liveStep = 15 * time.Second

// genClaim is one generated claim: its times, and how the controller served it.
type genClaim struct {
	created, deleted time.Time
	cold             bool
}

// genPool is one pool's generated history, and the series a cluster's Prometheus would hold
// of it: the exporter's gauge and the controller's counter, sampled at every step.
type genPool struct {
	name, namespace string
	claims          []genClaim
}

// generated draws a load day (replay.GenerateLoadDay) as the pool's claims, starting lead after
// base; every fifth claim was served cold.
func generated(t *testing.T, name string, seed uint64, base time.Time, lead time.Duration) genPool {
	t.Helper()
	p := replay.DefaultLoadDayParams()
	p.Seed = seed
	tr, err := replay.GenerateLoadDay(p)
	require.NoError(t, err)
	g := genPool{name: name, namespace: "agents-" + name}
	for i, a := range tr.Arrivals {
		c := base.Add(lead + a.At)
		g.claims = append(g.claims, genClaim{created: c, deleted: c.Add(a.Lifetime), cold: i%5 == 0})
	}
	return g
}

// held is the claims held at t: created at or before it, not yet deleted ((t-step, t] is a step).
func (g genPool) held(t time.Time) int {
	n := 0
	for _, c := range g.claims {
		if !c.created.After(t) && c.deleted.After(t) {
			n++
		}
	}
	return n
}

// createdIn counts the claims created in (from, to], warm or cold.
func (g genPool) createdIn(from, to time.Time, cold bool) int {
	n := 0
	for _, c := range g.claims {
		if c.created.After(from) && !c.created.After(to) && c.cold == cold {
			n++
		}
	}
	return n
}

// openMetrics writes the pools' series at every step from base to last, as Prometheus would have
// scraped them: warmpool_active_claims from two exporter replicas (the same count), and
// agent_sandbox_claim_creation_total per launch_type, reset to zero just after resetAt (the
// controller restarted) as a real restart does.
func openMetrics(t *testing.T, pools []genPool, base, last, resetAt time.Time) string {
	t.Helper()
	var b strings.Builder
	ts := func(at time.Time) string { return fmt.Sprintf("%d.%03d", at.Unix(), at.Nanosecond()/1e6) }
	b.WriteString("# HELP warmpool_active_claims SandboxClaims counted at the last successful read of the Kubernetes API.\n# TYPE warmpool_active_claims gauge\n")
	for _, g := range pools {
		for _, replica := range []string{"claim-exporter-a", "claim-exporter-b"} {
			for at := base; !at.After(last); at = at.Add(liveStep) {
				fmt.Fprintf(&b, "warmpool_active_claims{pool=%q,exported_namespace=%q,namespace=\"agents\",pod=%q} %d %s\n",
					g.name, g.namespace, replica, g.held(at), ts(at))
			}
		}
	}
	b.WriteString("# HELP agent_sandbox_claim_creation Total number of SandboxClaim creations.\n# TYPE agent_sandbox_claim_creation counter\n")
	for _, g := range pools {
		for _, launch := range []string{"warm", "cold"} {
			cold := launch == "cold"
			before := 0 // the counter's value just before the reset
			for at := base; !at.After(last); at = at.Add(liveStep) {
				v := g.createdIn(base.Add(-time.Hour), at, cold)
				if at.After(resetAt) {
					if before == 0 {
						before = g.createdIn(base.Add(-time.Hour), resetAt, cold)
					}
					v = g.createdIn(resetAt, at, cold)
					// The test's own premise: the reset shows as a drop (one that did not would
					// be read as a rise, by Prometheus' increase() as by FromPrometheus).
					if !at.After(resetAt.Add(liveStep)) {
						require.Less(t, v, before, "pool %s %s: the reset must show as a drop", g.name, launch)
					}
				}
				fmt.Fprintf(&b, "agent_sandbox_claim_creation_total{exported_namespace=%q,namespace=\"agent-sandbox-system\",sandbox_template=\"%s-agent\",launch_type=%q,warmpool_name=%q,pod_condition=\"ready\",created_by=\"go-client\"} %d %s\n",
					g.namespace, g.name, launch, g.name, v, ts(at))
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// startPrometheus backfills the series into a data directory with promtool and starts the
// Prometheus server on it, on a loopback port; both are stopped and removed when the test ends.
func startPrometheus(t *testing.T, promtool, prometheus, series string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "advise-prometheus-")
	require.NoError(t, err)
	var set *process.Set
	t.Cleanup(func() {
		if set != nil {
			for _, err := range set.Stop(10 * time.Second) { // by the pid it started, never by name
				t.Errorf("stopping prometheus: %v", err)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	data := filepath.Join(dir, "data")
	input := filepath.Join(dir, "series.om")
	require.NoError(t, os.WriteFile(input, []byte(series), 0o600))
	start := time.Now()
	out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput()
	require.NoError(t, err, "promtool tsdb create-blocks-from openmetrics:\n%s", out)
	t.Logf("backfilled in %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(lastLine(string(out))))
	config := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(config, []byte("global:\n  scrape_interval: 15s\n"), 0o600))
	addr, err := freeport.Addr() // 127.0.0.1:port: nothing listens beyond loopback
	require.NoError(t, err)
	set = process.NewSet(filepath.Join(dir, "state"), false)
	p, err := set.Start("prometheus", prometheus, []string{
		"--config.file=" + config,
		"--storage.tsdb.path=" + data,
		"--storage.tsdb.retention.time=30d", // the samples are from the last hours
		"--web.listen-address=" + addr,
	})
	require.NoError(t, err)
	url := "http://" + addr
	start = time.Now()
	require.NoError(t, process.WaitHealthy(context.Background(), p, url+"/-/ready", nil, 2*time.Minute))
	t.Logf("prometheus (pid %d) ready at %s after %s", p.Pid, url, time.Since(start).Round(time.Millisecond))
	return url
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestLivePrometheusHistory backfills two pools' generated claim history into a real Prometheus
// (built from the module proxy, the version promtool is) as the exporter's gauge and the
// controller's counter, reads it back through history.FromPrometheus and advise --prometheus, and
// holds the result to what was generated: the claims created in every step, the claims held at
// every step, every creation and deletion in its true step (so each end of a lifetime good to one
// step, lifetimes paired first in, first out), the warm/cold split; then the refusals a real
// Prometheus gives: a range wider than the data, an unknown pool, an unreachable URL.
func TestLivePrometheusHistory(t *testing.T) {
	start := time.Now()
	bins, err := toolcache.Ensure(context.Background(), os.Stderr, toolcache.PrometheusServer...)
	require.NoError(t, err)
	t.Logf("promtool and prometheus ready after %s", time.Since(start).Round(time.Second))

	// Three hours ago, on the step's grid: well within the retention, and behind the head block.
	base := time.Now().Add(-3 * time.Hour).Truncate(liveStep)
	pools := []genPool{
		generated(t, "code", 31, base, 2*time.Minute),
		generated(t, "browser", 32, base, 3*time.Minute),
	}
	var lastEnd time.Time
	for _, g := range pools {
		for _, c := range g.claims {
			if c.deleted.After(lastEnd) {
				lastEnd = c.deleted
			}
		}
	}
	last := lastEnd.Add(2 * time.Minute).Truncate(liveStep)
	// The controller restarts right after the scrape at resetAt: its counters start again from
	// zero. (Claims counted between a scrape and a restart are lost, to Prometheus as to the
	// history: a restart between scrapes would lose them here too, and the generated history
	// would no longer be what the series say.)
	resetAt := base.Add(12 * time.Minute)
	url := startPrometheus(t, bins.Path("promtool"), bins.Path("prometheus"), openMetrics(t, pools, base, last, resetAt))

	prom, err := history.PrometheusAPI(url)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q := history.Query{Start: base, End: last, Step: liveStep, Source: url} // every pool found
	read := time.Now()
	h, err := history.FromPrometheus(ctx, prom, q)
	require.NoError(t, err)
	t.Logf("history read and rebuilt in %s: %d steps", time.Since(read).Round(time.Millisecond), int(last.Sub(base)/liveStep)+1)
	require.Equal(t, []string{"browser", "code"}, h.PoolNames(), "the pools are every warmpool_name found")
	assert.Equal(t, base, h.Start)
	assert.Equal(t, last, h.End)
	assert.Equal(t, liveStep, h.Resolution)

	for _, g := range pools {
		got := h.Pools[g.name]
		require.Len(t, got, len(g.claims), "pool %s: every generated claim, no more", g.name)
		assert.Equal(t, 0, h.HeldAtStart[g.name])
		var warm, cold int
		for _, c := range g.claims {
			if c.cold {
				cold++
			} else {
				warm++
			}
		}
		assert.Equal(t, history.Launches{Warm: warm, Cold: cold}, h.Observed[g.name], "pool %s: the warm/cold split, through the counter's reset", g.name)

		// Per step: the claims created, and the claims held at its end.
		stepOf := func(at time.Time) int { return int((at.Sub(base) + liveStep - 1) / liveStep) } // (t-step, t] is step t
		createdGen, createdGot := map[int]int{}, map[int]int{}
		for _, c := range g.claims {
			createdGen[stepOf(c.created)]++
		}
		for _, c := range got {
			createdGot[stepOf(c.Created)]++
		}
		assert.Equal(t, createdGen, createdGot, "pool %s: the claims created per step", g.name)
		for at := base; !at.After(last); at = at.Add(liveStep) {
			n := 0
			for _, c := range got {
				if !c.Created.After(at) && (c.Held() || c.Deleted.After(at)) {
					n++
				}
			}
			if !assert.Equal(t, g.held(at), n, "pool %s: the claims held at %s", g.name, at.Format(time.RFC3339)) {
				break
			}
		}

		// Lifetimes: the two series say how many claims ended in a step, not which; the history
		// ends the oldest first. So the i-th claim created ends at the i-th deletion: each end in
		// its true step, the lifetime within a step of the first-in-first-out pairing at each end.
		created := make([]time.Time, len(g.claims))
		deleted := make([]time.Time, len(g.claims))
		for i, c := range g.claims {
			created[i], deleted[i] = c.created, c.deleted
		}
		sort.Slice(created, func(i, j int) bool { return created[i].Before(created[j]) })
		sort.Slice(deleted, func(i, j int) bool { return deleted[i].Before(deleted[j]) })
		var withinOne, trueWithinOne int
		var trueErr []float64
		byCreation := append([]genClaim(nil), g.claims...)
		sort.Slice(byCreation, func(i, j int) bool { return byCreation[i].created.Before(byCreation[j].created) })
		for i, c := range got {
			require.False(t, c.Held(), "pool %s: claim %d is held at the end, though every generated claim ended", g.name, i)
			assert.Equal(t, stepOf(created[i]), stepOf(c.Created), "pool %s claim %d: created in its step", g.name, i)
			assert.Equal(t, stepOf(deleted[i]), stepOf(c.Deleted), "pool %s claim %d: deleted in its step", g.name, i)
			life, fifoLife := c.Deleted.Sub(c.Created), deleted[i].Sub(created[i])
			assert.Less(t, (life - fifoLife).Abs(), 2*liveStep, "pool %s claim %d: lifetime %s, the pairing's %s", g.name, i, life, fifoLife)
			if (life - fifoLife).Abs() <= liveStep {
				withinOne++
			}
			own := byCreation[i].deleted.Sub(byCreation[i].created)
			trueErr = append(trueErr, (life - own).Abs().Seconds())
			if (life - own).Abs() <= liveStep {
				trueWithinOne++
			}
		}
		sort.Float64s(trueErr)
		t.Logf("pool %s: %d claims (%d warm, %d cold); lifetimes within one step of the FIFO pairing: %d of %d; of the claim's own lifetime: %d of %d (median error %.1f s, p90 %.1f s)",
			g.name, len(got), warm, cold, withinOne, len(got), trueWithinOne, len(got), trueErr[len(trueErr)/2], trueErr[int(math.Floor(0.9*float64(len(trueErr))))])
	}

	// advise itself, on the same Prometheus: the source and the warm/cold split printed, then the advice.
	var out, errOut bytes.Buffer
	code := advisor.Main([]string{"--prometheus", url, "--pools", "code", "--from", base.Format(time.RFC3339), "--to", last.Format(time.RFC3339), "--day", "20m", "--current", "fixed-10"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	o := h.Observed["code"]
	assert.Contains(t, out.String(), fmt.Sprintf("history: rebuilt from the Prometheus at %s", url))
	assert.Contains(t, out.String(), fmt.Sprintf("pool code: %d claims created; the controller served %d warm, %d cold", len(h.Pools["code"]), o.Warm, o.Cold))
	assert.Contains(t, out.String(), "verdict:")
	assert.NotContains(t, out.String(), "pool browser")
	// the model's prediction of the setting run now, held against what the controller counted
	assert.Contains(t, out.String(), "the model against what you got: it gives fixed-10 ")
	assert.Contains(t, out.String(), fmt.Sprintf("the controller counted %.1f%% (%d warm, %d cold)", 100*o.WarmShare(), o.Warm, o.Cold))

	// The refusals, from the real server.
	for _, c := range []struct {
		name string
		q    history.Query
		url  string
		want []string
	}{
		{"a range wider than the data", history.Query{Pools: []string{"code"}, Start: base.Add(-10 * time.Minute), End: last, Step: liveStep}, url,
			[]string{"pool code: warmpool_active_claims{pool=\"code\"} covers only " + base.Format(time.RFC3339) + " to " + last.Format(time.RFC3339), "a partial range", "missing at its start"}},
		{"a pool it does not have", history.Query{Pools: []string{"code", "nosuch"}, Start: base, End: last, Step: liveStep}, url,
			[]string{`pool nosuch: no warmpool_active_claims series with pool="nosuch"`}},
		{"an unreachable URL", history.Query{Start: base, End: last, Step: liveStep}, "", []string{"cannot reach the Prometheus at http://127.0.0.1:"}},
	} {
		at := c.url
		if at == "" {
			addr, err := freeport.Addr()
			require.NoError(t, err)
			at = "http://" + addr
		}
		api, err := history.PrometheusAPI(at)
		require.NoError(t, err)
		c.q.Source = at
		h, err := history.FromPrometheus(ctx, api, c.q)
		if assert.Error(t, err, c.name) {
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w, c.name)
			}
			t.Logf("%s: %v", c.name, err)
		}
		assert.Nil(t, h, c.name)
	}
	t.Logf("the whole test: %s", time.Since(start).Round(time.Second))
}
