package bursts

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPodSecondsIntegratesOnlyTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	samples := []Sample{
		{At: at(-10), Ready: 2},             // before the window: counts from its start
		{At: at(5), Ready: 3, Booting: 1},   // 2 ready for 5 s
		{At: at(15), Ready: 0, Booting: 2},  // 3 ready, 1 booting for 10 s
		{At: at(30), Ready: 10, Booting: 0}, // after the window: ignored
	}
	ready, booting := PodSeconds(samples, at(0), at(20))
	// ready: 2*5 + 3*10 + 0*5 = 40; booting: 0*5 + 1*10 + 2*5 = 20
	if math.Abs(ready-40) > 1e-9 || math.Abs(booting-20) > 1e-9 {
		t.Fatalf("PodSeconds = %v ready, %v booting; want 40 and 20", ready, booting)
	}
	if r, b := PodSeconds(nil, at(0), at(20)); r != 0 || b != 0 {
		t.Fatalf("no samples gave %v, %v", r, b)
	}
}

func TestWarmShareCountsTheLaunchTypeLabel(t *testing.T) {
	now := time.Now()
	r := Result{Claims: []ClaimResult{
		{LaunchType: "warm", Created: now, Ready: now.Add(100 * time.Millisecond)},
		{LaunchType: "warm", Created: now, Ready: now.Add(200 * time.Millisecond)},
		{LaunchType: "cold", Created: now, Ready: now.Add(6 * time.Second)},
		{LaunchType: "", Created: now}, // never Ready: counts as not warm
	}}
	if got := r.WarmShare(); got != 50 {
		t.Fatalf("WarmShare = %v, want 50", got)
	}
	if never, unknown := r.Unknown(); never != 1 || unknown != 1 {
		t.Fatalf("Unknown = %d, %d; want 1, 1", never, unknown)
	}
	if got := r.Latency(100); got != 6*time.Second {
		t.Fatalf("max latency %s, want 6s (the never-Ready claim has none)", got)
	}
}

func TestVerdictNeedsBothShareAndIdle(t *testing.T) {
	mk := func(warm, cold int, idle float64) Result {
		r := Result{Policy: Policy{Name: "p"}, IdleWarm: idle}
		for i := 0; i < warm; i++ {
			r.Claims = append(r.Claims, ClaimResult{LaunchType: "warm"})
		}
		for i := 0; i < cold; i++ {
			r.Claims = append(r.Claims, ClaimResult{LaunchType: "cold"})
		}
		return r
	}
	fixedMax := mk(100, 0, 1000)
	for _, c := range []struct {
		r    Result
		want bool
	}{
		{mk(98, 2, 500), true},   // exactly 2 points below, exactly half
		{mk(97, 3, 400), false},  // share too low
		{mk(100, 0, 501), false}, // idle too high
	} {
		ok, msg := Verdict(c.r, fixedMax)
		if ok != c.want {
			t.Errorf("%s: got %v, want %v", msg, ok, c.want)
		}
	}
}

func TestTableHasARowPerPolicyAndFlagsMissingData(t *testing.T) {
	now := time.Now()
	table := Table([]Result{
		{Policy: Policy{Name: "fixed-max", How: "fixed pool of 30"}, IdleWarm: 25000, Claims: []ClaimResult{{LaunchType: "warm", Created: now, Ready: now.Add(time.Second)}}},
		{Policy: Policy{Name: "blueprint", How: "as deployed"}, Claims: []ClaimResult{{Created: now}}},
	})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 {
		t.Fatalf("want header, separator and 2 rows:\n%s", table)
	}
	if !strings.Contains(lines[2], "| fixed-max | fixed pool of 30 | 100.0% | 1.00 s |") || !strings.Contains(lines[2], "| 25000 |") {
		t.Errorf("fixed-max row: %s", lines[2])
	}
	if !strings.Contains(lines[3], "1 never Ready, 1 launch type unseen") {
		t.Errorf("the blueprint row hides its missing data: %s", lines[3])
	}
}
