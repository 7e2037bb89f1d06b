package bursts

import (
	"fmt"
	"math"
	"strings"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// LaunchTypeLabel is the label agent-sandbox (v0.5.6, extensions) puts on a
// Sandbox: "warm" when it came from a warm pool, "cold" when the claim's
// controller had to create it.
const LaunchTypeLabel = "agents.x-k8s.io/launch-type"

// ClaimResult is what the client saw of one claim.
type ClaimResult struct {
	Name string
	// Created is just before the create request was sent; Ready is when the
	// client first saw the claim's Ready condition True (zero: never);
	// Deleted just before the delete request was sent (zero: not yet).
	Created, Ready, Deleted time.Time
	Sandbox                 string
	LaunchType              string // of the claim's sandbox: warm, cold or "" (unknown)
}

// Latency is create -> Ready as the client saw it.
func (c ClaimResult) Latency() (time.Duration, bool) {
	if c.Ready.IsZero() {
		return 0, false
	}
	return c.Ready.Sub(c.Created), true
}

// Sample is the number of a pool's sandboxes nobody holds, from At on.
type Sample struct {
	At             time.Time
	Ready, Booting int
}

// PodSeconds integrates a step function of samples over [from, to): the
// pod-seconds of Ready (warm, unheld) and of Booting (unheld, not yet Ready)
// sandboxes. Before the first sample the count is 0.
func PodSeconds(samples []Sample, from, to time.Time) (ready, booting float64) {
	var cur Sample
	at := from
	for _, s := range samples {
		if !s.At.After(from) {
			cur = s
			continue
		}
		if !s.At.Before(to) {
			break
		}
		d := s.At.Sub(at).Seconds()
		ready += float64(cur.Ready) * d
		booting += float64(cur.Booting) * d
		cur, at = s, s.At
	}
	d := to.Sub(at).Seconds()
	if d > 0 {
		ready += float64(cur.Ready) * d
		booting += float64(cur.Booting) * d
	}
	return ready, booting
}

// Result is one policy's outcome on the trace.
type Result struct {
	Policy Policy
	Claims []ClaimResult
	// IdleWarm is the pod-seconds of Ready sandboxes nobody held during the
	// trace; IdleBooting those of unheld sandboxes still booting.
	IdleWarm, IdleBooting float64
	// Boots are the observed boot times (first seen -> Ready) of this
	// policy's sandboxes: the simulated cold start as it really came out.
	Boots []time.Duration
}

// WarmShare is the percentage of claims whose sandbox is labelled warm.
func (r Result) WarmShare() float64 {
	if len(r.Claims) == 0 {
		return 0
	}
	warm := 0
	for _, c := range r.Claims {
		if c.LaunchType == "warm" {
			warm++
		}
	}
	return 100 * float64(warm) / float64(len(r.Claims))
}

// Unknown counts claims that never became Ready or whose launch type was
// never seen: they count as not warm, and the table says how many.
func (r Result) Unknown() (neverReady, noLaunchType int) {
	for _, c := range r.Claims {
		if c.Ready.IsZero() {
			neverReady++
		}
		if c.LaunchType == "" {
			noLaunchType++
		}
	}
	return
}

// Latency is the p-th percentile (nearest rank) of create -> Ready.
func (r Result) Latency(p float64) time.Duration {
	var ds []time.Duration
	for _, c := range r.Claims {
		if d, ok := c.Latency(); ok {
			ds = append(ds, d)
		}
	}
	return replay.Percentile(ds, p)
}

// Verdict compares an autoscaled policy with the fixed pool at the maximum:
// the goal is its warm-hit share within 2 points at no more than half its
// idle warm-pod-seconds.
func Verdict(r, fixedMax Result) (bool, string) {
	share, idle := r.WarmShare(), r.IdleWarm
	shareOK := share >= fixedMax.WarmShare()-2
	idleOK := idle <= fixedMax.IdleWarm/2
	msg := fmt.Sprintf("%s: warm %.1f%% vs fixed-max %.1f%% (needs >= %.1f%%: %s), idle %.0f vs fixed-max %.0f warm-pod-s (%.0f%%, needs <= 50%%: %s)",
		r.Policy.Name, share, fixedMax.WarmShare(), fixedMax.WarmShare()-2, yesNo(shareOK),
		idle, fixedMax.IdleWarm, 100*idle/math.Max(fixedMax.IdleWarm, 1), yesNo(idleOK))
	return shareOK && idleOK, msg
}

func yesNo(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// Table is the Markdown table of the results, one row per policy.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| policy | what it does | warm hits | create->Ready p50 | p95 | p99 | idle warm-pod-s | idle booting pod-s | claims |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		never, unknown := r.Unknown()
		claims := fmt.Sprint(len(r.Claims))
		if never > 0 || unknown > 0 {
			claims += fmt.Sprintf(" (%d never Ready, %d launch type unseen)", never, unknown)
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f%% | %s | %s | %s | %.0f | %.0f | %s |\n",
			r.Policy.Name, r.Policy.How, r.WarmShare(), secs(r.Latency(50)), secs(r.Latency(95)), secs(r.Latency(99)),
			r.IdleWarm, r.IdleBooting, claims)
	}
	return b.String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
