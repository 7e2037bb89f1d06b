package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// The whole demand phase against a cluster that behaves: every check passes
// and every step of the mapping is recorded, up and down.
func TestDemandPhaseAccepts(t *testing.T) {
	c := newCluster(t)
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	t.Log("\n" + out)
	if strings.Contains(out, "interrupted") {
		t.Errorf("a run nobody interrupted says it was interrupted")
	}
	if code != 0 {
		t.Fatalf("exit %d, failures: %v", code, rep.Failures())
	}
	if rep.Skipped != 0 {
		t.Fatalf("nothing should be skipped here, got %d", rep.Skipped)
	}
	wantUp := []int64{1, 1, 2, 3}
	wantDown := []int64{2, 1, 1}
	if len(rep.ScaleUp) != 4 || len(rep.ScaleDown) != 3 {
		t.Fatalf("steps up %d down %d, want 4 (0..3 claims) and 3", len(rep.ScaleUp), len(rep.ScaleDown))
	}
	for i, s := range rep.ScaleUp {
		if s.Claims != i || s.Expected != wantUp[i] || s.SpecReplicas == nil || *s.SpecReplicas != wantUp[i] || s.LatencySeconds == nil {
			t.Errorf("up step %d: %+v", i, s)
		}
	}
	for i, s := range rep.ScaleDown {
		if s.Claims != 2-i || s.Expected != wantDown[i] || s.SpecReplicas == nil || *s.SpecReplicas != wantDown[i] {
			t.Errorf("down step %d: %+v", i, s)
		}
	}
	if rep.AdoptionLatencySeconds == nil {
		t.Error("adoption latency not recorded")
	}
	if n := c.claimNames(testNS); len(n) != 0 {
		t.Errorf("claims left behind: %v", n)
	}
	if !strings.Contains(out, "checks passed") || !strings.HasSuffix(strings.TrimSpace(out), rep.FinalLine()) {
		t.Errorf("the last line must be the summary, got %q", out[max(0, len(out)-200):])
	}
	var j map[string]any
	b, _ := rep.JSON()
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"checks", "scaleUp", "scaleDown", "adoptionLatencySeconds"} {
		if _, ok := j[k]; !ok {
			t.Errorf("JSON report lacks %q", k)
		}
	}
}

// Each way the cluster can misbehave fails the named check (and the run).
func TestDemandPhaseRejects(t *testing.T) {
	leftover := newDemandClaim(testNS, "demand-2", "warm-pool")
	foreign := newDemandClaim(testNS, "someone-elses", "warm-pool")
	zero := int64(0)
	cases := []struct {
		name      string
		setup     func(c *cluster)
		extra     []runtime.Object
		demand    func(c *cluster) DemandReader
		wantFail  string
		survivors []string
	}{
		{name: "the HPA does not follow demand", setup: func(c *cluster) { c.keda.Store(false) }, wantFail: "scale up: 2 claim(s)"},
		{name: "the HPA stops short of the cap", setup: func(c *cluster) { c.stuckAt = 2 }, wantFail: "scale up: 3 claim(s)"},
		{name: "a cold sandbox", setup: func(c *cluster) { c.cold.Store(true) }, wantFail: "adopted a pre-booted sandbox"},
		{name: "a pod created for the claim", setup: func(c *cluster) { c.freshPods.Store(true) }, wantFail: "the pod predates the claim"},
		{name: "Ready too slow", setup: func(c *cluster) { c.readyDelay = 1500 * time.Millisecond }, wantFail: "Ready within the bound"},
		{name: "a leftover demand claim", extra: []runtime.Object{leftover}, wantFail: "no demand claim is left over", survivors: []string{"demand-2"}},
		{name: "a claim that is not ours is counted", extra: []runtime.Object{foreign}, wantFail: "no demand at the start", survivors: []string{"someone-elses"}},
		{name: "the exporter cannot be read", demand: func(*cluster) DemandReader { return fakeDemand{err: errors.New("HTTP 503: no read yet")} }, wantFail: "the exporter served active_claims=3"},
		{name: "the exporter serves a stale count", demand: func(*cluster) DemandReader { return fakeDemand{fixed: &zero} }, wantFail: "the exporter served active_claims=3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			if tc.setup != nil {
				tc.setup(c)
			}
			c.start(tc.extra...)
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.StepTimeout = 1500 * time.Millisecond
			var d DemandReader = fakeDemand{c: c}
			if tc.demand != nil {
				d = tc.demand(c)
			}
			code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), d)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			if got := status(t, rep, tc.wantFail); got != Fail {
				t.Fatalf("check %q is %s, want FAIL\n%s", tc.wantFail, got, out)
			}
			names := c.claimNames(testNS)
			for _, s := range tc.survivors {
				if !strings.Contains(strings.Join(names, ","), s) {
					t.Errorf("claim %s, not created by this run, was deleted (left: %v)", s, names)
				}
			}
			for _, n := range names {
				if strings.HasPrefix(n, "demand-") && !contains(tc.survivors, n) {
					t.Errorf("this run's claim %s was left behind", n)
				}
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// On a KWOK node there is no kubelet: every reading is SKIP, never PASS, the
// exec is not even tried, and the summary says so.
func TestReadingsSkipOnKWOK(t *testing.T) {
	c := newCluster(t)
	c.kwok = true
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	ex := blueprintExec()
	code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
	if code != 0 {
		t.Fatalf("exit %d: %v", code, rep.Failures())
	}
	for _, rc := range readingChecks {
		if got := status(t, rep, rc.name); got != Skip {
			t.Errorf("%s: %s, want SKIP", rc.name, got)
		}
	}
	if ex.calls.Load() != 0 {
		t.Errorf("exec was tried %d times on a KWOK node", ex.calls.Load())
	}
	if !strings.Contains(out, "skipped, not counted as passed") || !strings.Contains(out, "KWOK") {
		t.Errorf("the output must say why and that skips are not passes:\n%s", out)
	}
}

// An exec that cannot reach a kubelet is SKIP (FAIL with --require-exec); an
// exec that is refused is FAIL, never SKIP.
func TestReadingsExecFailures(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		require bool
		want    Status
	}{
		{"no kubelet", errors.New("error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused"), false, Skip},
		{"no kubelet, --require-exec", errors.New("error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused"), true, Fail},
		{"refused", errors.New(`pods "x" is forbidden: User "dev" cannot create resource "pods/exec"`), false, Fail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.RequireExec = tc.require
			_, rep, out := runWith(t, context.Background(), c, cfg, &fakeExec{err: tc.err}, fakeDemand{c: c})
			for _, rc := range readingChecks {
				cs := rep.Find(rc.name)
				if len(cs) == 0 {
					t.Fatalf("no check %q\n%s", rc.name, out)
				}
				for _, ch := range cs {
					if ch.Status == Pass {
						t.Errorf("%s passed without a reading", rc.name)
					}
				}
			}
			if got := status(t, rep, "exec into the claimed pod works"); got != tc.want {
				t.Errorf("exec check %s, want %s\n%s", got, tc.want, out)
			}
		})
	}
}

// A second claim of ours that already exists at scale-up fails the step
// instead of being reused, and is not deleted.
func TestScaleUpRefusesExistingClaim(t *testing.T) {
	c := newCluster(t)
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	cfg.StepTimeout = 1500 * time.Millisecond
	ex := blueprintExec()
	// Created after the baseline checked, as a concurrent user would.
	go func() {
		for {
			if contains(c.claimNames(testNS), "demand-1") {
				u := newDemandClaim(testNS, "demand-2", "warm-pool")
				u.SetLabels(map[string]string{"owner": "someone"})
				_, _ = c.dyn.Resource(gvrClaim).Namespace(testNS).Create(context.Background(), u, metav1CreateOptions())
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
	if code != 1 || status(t, rep, "scale up: create demand-2") != Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	got, err := c.dyn.Resource(gvrClaim).Namespace(testNS).Get(context.Background(), "demand-2", metav1GetOptions())
	if err != nil || got.GetLabels()["owner"] != "someone" {
		t.Fatalf("the other user's demand-2 was touched: %v %v", err, got)
	}
}
