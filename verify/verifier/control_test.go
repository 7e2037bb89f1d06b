package verifier

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

func controlConfig() Config {
	cfg := testConfig()
	cfg.Phase = "control"
	return cfg
}

// acceptWindow is the control window of a run that must pass. The window is read at its start
// and again at its end, so it shows the two readings the check needs only when the first read
// ends inside it: a loaded machine has taken longer than testConfig's 300 ms for that read.
const acceptWindow = 2 * time.Second

// The control against a cluster where only KEDA moves the pool: it stays
// flat, and everything is put back and read back.
func TestControlAccepts(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.start()
	cfg := controlConfig()
	cfg.ControlFloor = acceptWindow
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	t.Log("\n" + out)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, rep.Failures())
	}
	so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(context.Background(), "warm-pool", metav1.GetOptions{})
	if err != nil || so.GetDeletionTimestamp() != nil || so.GetUID() == "so-uid-0" {
		t.Fatalf("ScaledObject not recreated: %v %v", err, so)
	}
	if so.GetLabels()[labelPartOf] != projectName {
		t.Errorf("the recreated ScaledObject lost its labels: %v", so.GetLabels())
	}
	if _, found := so.Object["status"]; found {
		t.Error("the recreated ScaledObject carries the old status")
	}
	if n := c.claimNames(testNS); len(n) != 0 {
		t.Errorf("claims left: %v", n)
	}
	if rep.Control == nil || rep.Control.Readings < 2 || rep.Control.WindowSeconds < acceptWindow.Seconds() {
		t.Errorf("control window not recorded: %+v", rep.Control)
	}
	if !strings.Contains(out, "during the window, every one of them 1") {
		t.Errorf("reading count not printed")
	}
}

// The window is derived from the measured scale-up time, with a floor.
func TestControlWindow(t *testing.T) {
	r := &Runner{cfg: Config{ControlFloor: 60 * time.Second, ControlK: 4}}
	if w, _ := r.controlWindow(); w != 60*time.Second {
		t.Errorf("no measurement: %s, want the floor", w)
	}
	r.upDecision = 20 * time.Second
	if w, how := r.controlWindow(); w != 80*time.Second || !strings.Contains(how, "measured") {
		t.Errorf("measured 20s: %s (%s), want 80s", w, how)
	}
	r.upDecision = 0
	r.cfg.ScaleUpTime = 16 * time.Second
	if w, how := r.controlWindow(); w != 64*time.Second || !strings.Contains(how, "--scale-up-time") {
		t.Errorf("--scale-up-time 16s: %s (%s), want 64s", w, how)
	}
}

// Each way the control can be wrong fails its check, and the ScaledObject is
// restored anyway.
func TestControlRejects(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	zero := int64(0)
	cases := []struct {
		name     string
		setup    func(c *cluster)
		demand   func(c *cluster) DemandReader
		wantFail string
		window   time.Duration // the control window's floor, when the fault must show inside it
		// hpaTimeout is the HPA waits' bound when one of them is the verdict (the HPA never
		// goes, or never comes back); the others wait for a fake that acts within
		// milliseconds, so they get a minute, which a wait that succeeds never spends.
		hpaTimeout time.Duration
	}{
		{name: "something else moves the pool", setup: func(c *cluster) { c.rogue.Store(true) }, wantFail: "spec.replicas stays flat", window: faultWindow},
		{name: "the HPA outlives the ScaledObject", setup: func(c *cluster) { c.noGC.Store(true) }, wantFail: "the ScaledObject and its HPA are gone", hpaTimeout: time.Second},
		{name: "the exporter does not serve the demand", demand: func(*cluster) DemandReader { return fakeDemand{fixed: &zero} }, wantFail: "the exporter served active_claims=3"},
		{name: "KEDA does not take the pool back", setup: func(c *cluster) {
			// KEDA stops creating HPAs once its first one is gone.
			c.kedaQuits.Store(true)
		}, wantFail: "KEDA created its HPA again", hpaTimeout: 5 * time.Second}, // the first HPA must go within it; the second never comes
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			if tc.setup != nil {
				tc.setup(c)
			}
			c.start()
			cfg := controlConfig()
			cfg.HPATimeout = time.Minute
			if tc.hpaTimeout > 0 {
				cfg.HPATimeout = tc.hpaTimeout
			}
			if tc.window > 0 {
				cfg.ControlFloor = tc.window
			}
			var d DemandReader = fakeDemand{c: c}
			if tc.demand != nil {
				d = tc.demand(c)
			}
			code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), d)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, out)
			}
			if got := status(t, rep, tc.wantFail); got != report.Fail {
				t.Fatalf("%q is %s, want FAIL\n%s", tc.wantFail, got, out)
			}
			if _, ok := c.soExists(context.Background()); !ok {
				t.Fatalf("the ScaledObject was not restored\n%s", out)
			}
			for _, n := range c.claimNames(testNS) {
				if strings.HasPrefix(n, "demand-") {
					t.Errorf("claim %s left behind", n)
				}
			}
		})
	}
}

// Interrupt mid-control: the ScaledObject comes back (read back, not
// terminating), this run's claims are deleted by exact name, and claims this
// run did not create (same namespace, or same name elsewhere) are untouched.
func TestControlInterruptRestores(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	foreign := newDemandClaim(testNS, "user-session", "warm-pool")
	foreign.SetLabels(map[string]string{"team": "a"}) // outside the exporter's selector
	elsewhere := newDemandClaim("other", "demand-1", "other-pool")
	c.start([]runtime.Object{foreign, elsewhere}...)
	cfg := controlConfig()
	cfg.ClaimSelector = labelPartOf + "=" + projectName
	cfg.ControlFloor = 5 * time.Minute // the interrupt lands inside the window, however slow the run

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once the control holds its three claims and is watching.
		for {
			n := c.claimNames(testNS)
			if contains(n, "demand-3") {
				time.Sleep(300 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	code, rep, out := runWith(t, ctx, c, cfg, blueprintExec(), fakeDemand{c: c, selector: cfg.ClaimSelector})
	t.Log("\n" + out)
	// Far below the window and far above the run's own work: only a window that ran on fails it.
	if time.Since(start) > time.Minute {
		t.Fatalf("the interrupt did not end the window early (%s)", time.Since(start))
	}
	if code != 1 || status(t, rep, "the run completed") != report.Fail {
		t.Fatalf("an interrupted run must fail: exit %d", code)
	}
	so, err := c.dyn.Resource(gvr.ScaledObject).Namespace(testNS).Get(context.Background(), "warm-pool", metav1.GetOptions{})
	if err != nil || so.GetDeletionTimestamp() != nil {
		t.Fatalf("ScaledObject not restored after the interrupt: %v", err)
	}
	if status(t, rep, "exit handler restored the ScaledObject") != report.Pass || status(t, rep, "exit handler deleted this run's claims") != report.Pass {
		t.Fatalf("the exit handler did not report its work:\n%s", out)
	}
	for _, n := range []string{"demand-1", "demand-2", "demand-3"} {
		if _, err := c.dyn.Resource(gvr.SandboxClaim).Namespace(testNS).Get(context.Background(), n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("claim %s not deleted: %v", n, err)
		}
	}
	if !contains(c.claimNames(testNS), "user-session") {
		t.Error("a claim this run did not create was deleted")
	}
	if !contains(c.claimNames("other"), "demand-1") {
		t.Error("a claim of the same name in another namespace was deleted")
	}
}

// --phase all: demand, then the control sized from the measured scale-up.
// Its output is the sample run in verify/README.md.
func TestAllPhases(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.kwok = true // as on the local control plane: readings SKIP
	c.start()
	cfg := testConfig()
	code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	t.Log("\n" + out)
	if code != 0 {
		t.Fatalf("exit %d: %v", code, rep.Failures())
	}
	if rep.Control == nil || len(rep.ScaleUp) != 4 || len(rep.ScaleDown) != 3 {
		t.Fatalf("incomplete report: %+v", rep)
	}
	if !strings.Contains(rep.Control.Derivation, "measured slowest scale-up decision") {
		t.Errorf("the control window must come from the demand phase's measurement: %s", rep.Control.Derivation)
	}
}
