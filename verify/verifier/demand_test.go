package verifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
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
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	leftover := newDemandClaim(testNS, "demand-2", "warm-pool")
	foreign := newDemandClaim(testNS, "someone-elses", "warm-pool")
	zero := int64(0)
	cases := []struct {
		name   string
		setup  func(c *cluster)
		extra  []runtime.Object
		demand func(c *cluster) DemandReader
		// adoptionBound, when set, replaces testConfig's minute
		adoptionBound time.Duration
		wantFail      string
		survivors     []string
	}{
		{name: "the HPA does not follow demand", setup: func(c *cluster) { c.keda.Store(false) }, wantFail: "scale up: 2 claim(s)"},
		{name: "the HPA stops short of the cap", setup: func(c *cluster) { c.stuckAt = 2 }, wantFail: "scale up: 3 claim(s)"},
		{name: "a cold sandbox", setup: func(c *cluster) { c.cold.Store(true) }, wantFail: "adopted a pre-booted sandbox"},
		{name: "a pod created for the claim", setup: func(c *cluster) { c.freshPods.Store(true) }, wantFail: "the pod predates the claim"},
		// testConfig's bound is a minute; this case's is 1 s against a Ready at 1.5 s at the earliest.
		{name: "Ready too slow", setup: func(c *cluster) { c.readyDelay = 1500 * time.Millisecond }, adoptionBound: time.Second, wantFail: "Ready within the bound"},
		{name: "a leftover demand claim", extra: []runtime.Object{leftover}, wantFail: "no demand claim is left over", survivors: []string{"demand-2"}},
		{name: "a claim that is not ours is counted", extra: []runtime.Object{foreign}, wantFail: "no demand at the start", survivors: []string{"someone-elses"}},
		{name: "the exporter cannot be read", demand: func(*cluster) DemandReader { return fakeDemand{err: errors.New("HTTP 503: no read yet")} }, wantFail: "the exporter served active_claims=3"},
		{name: "the exporter serves a stale count", demand: func(*cluster) DemandReader { return fakeDemand{fixed: &zero} }, wantFail: "the exporter served active_claims=3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has a fake cluster of its own; they wait in wall time
			c := newCluster(t)
			if tc.setup != nil {
				tc.setup(c)
			}
			c.start(tc.extra...)
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.StepTimeout = 1500 * time.Millisecond
			if tc.adoptionBound > 0 {
				cfg.AdoptionBound = tc.adoptionBound
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
		if got := status(t, rep, rc.name); got != report.Skip {
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

// Only a node without a kubelet makes the readings SKIP (FAIL with
// --require-exec), decided from the node before any exec. On a node with a
// kubelet every exec failure FAILs with its error, whatever the error says:
// "connection refused" from a reachable kubelet is not "no kubelet".
func TestReadingsExecFailures(t *testing.T) {
	dialErr := errors.New("error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused")
	cases := []struct {
		name       string
		noEndpoint bool
		err        error
		require    bool
		want       report.Status
		execs      bool // exec was tried
	}{
		{"node publishes no kubelet endpoint", true, dialErr, false, report.Skip, false},
		{"node publishes no kubelet endpoint, --require-exec", true, dialErr, true, report.Fail, false},
		{"kubelet there, dial refused", false, dialErr, false, report.Fail, true},
		{"kubelet there, runtime error that says connection refused", false, errors.New(`Internal error occurred: error executing command in container: failed to exec in container: rpc error: code = Unknown desc = dial unix /run/containerd/s/abc: connect: connection refused`), false, report.Fail, true},
		{"kubelet there, no route to host", false, errors.New("error dialing backend: dial tcp 10.0.0.9:10250: connect: no route to host"), false, report.Fail, true},
		{"refused by RBAC", false, errors.New(`pods "x" is forbidden: User "dev" cannot create resource "pods/exec"`), false, report.Fail, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.noKubeletEndpoint = tc.noEndpoint
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.RequireExec = tc.require
			ex := &fakeExec{err: tc.err}
			code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
			for _, rc := range readingChecks {
				if got := status(t, rep, rc.name); got != tc.want {
					t.Errorf("%s: %s, want %s\n%s", rc.name, got, tc.want, out)
				}
			}
			if (ex.calls.Load() > 0) != tc.execs {
				t.Errorf("exec tried %d time(s), want tried=%t", ex.calls.Load(), tc.execs)
			}
			if tc.want == report.Fail && (code != 1 || !strings.Contains(out, tc.err.Error()) && tc.execs) {
				t.Errorf("exit %d; a FAIL must carry the exec's error\n%s", code, out)
			}
		})
	}
}

// An exec the container runtime failed is tried again, up to three times in all: once is
// retried and the readings are judged on the answer; always fails the readings after three
// attempts with the runtime's words; a command the image lacks, and a refusal, are not retried.
func TestReadingsRetryAnExecTheRuntimeFailed(t *testing.T) {
	runsc := errors.New(`Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "65d7": OCI runtime exec failed: /usr/bin/runsc did not terminate successfully: exit status 128`)
	absent := errors.New(`Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "5b73": OCI runtime exec failed: exec failed: unable to start container process: exec: "uname": executable file not found in $PATH`)
	forbidden := errors.New(`pods "x" is forbidden: User "dev" cannot create resource "pods/exec"`)
	for _, tc := range []struct {
		name      string
		ex        *fakeExec
		want      report.Status
		calls     int32 // execs of the first command (uname), when the readings stop at it
		evidences []string
	}{
		{"the runtime fails once", func() *fakeExec { f := gvisorExec(); f.flaky, f.flakyFor = runsc, 1; return f }(), report.Pass, 0,
			[]string{"the container runtime failed the exec (attempt 1 of 3); trying again in 2s", "PASS the claimed pod runs its own kernel"}},
		{"the runtime fails every time", &fakeExec{err: runsc}, report.Fail, 3,
			[]string{"(attempt 2 of 3)", "did not terminate successfully"}},
		{"the image has no uname", &fakeExec{err: absent}, report.Fail, 1, nil},
		{"exec is refused", &fakeExec{err: forbidden}, report.Fail, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.Isolation = isolationGVisor
			_, rep, out := runWith(t, context.Background(), c, cfg, tc.ex, fakeDemand{c: c})
			if got := status(t, rep, "runs its own kernel"); got != tc.want {
				t.Errorf("kernel check %s, want %s\n%s", got, tc.want, out)
			}
			if tc.calls > 0 && tc.ex.calls.Load() != tc.calls {
				t.Errorf("exec tried %d time(s), want %d\n%s", tc.ex.calls.Load(), tc.calls, out)
			}
			for _, e := range tc.evidences {
				if !strings.Contains(out, e) {
					t.Errorf("output lacks %q\n%s", e, out)
				}
			}
		})
	}
}

// The isolation the stack declares decides how the readings are judged.
// gVisor's readings pass under --isolation gvisor with the VM-only ones N/A
// (printed with the reading, not counted as passes) and fail under vm; a
// runc pool, which gives no isolation, FAILs the kernel and uptime checks
// under either.
func TestReadingsByIsolation(t *testing.T) {
	cases := []struct {
		name      string
		iso       string
		ex        *fakeExec
		want      map[string]report.Status
		exit      int
		evidences []string
	}{
		{"gVisor declared gvisor", isolationGVisor, gvisorExec(), map[string]report.Status{
			"exec into the claimed pod works": report.Pass, "runs its own kernel": report.Pass, "booted after the pod": report.Pass,
			"virtio block devices": report.NA, "DMI product name": report.NA,
			"only loopback": report.Pass, "no default route": report.Pass, "an outbound request fails": report.Pass,
		}, 0, []string{"N/A the claimed pod sees virtio block devices: /sys/block is empty", "No such file or directory", "2 not applicable, not counted as passed", "a loopback route"}},
		{"gVisor declared vm", isolationVM, gvisorExec(), map[string]report.Status{
			"virtio block devices": report.Fail, "DMI product name": report.Fail, "runs its own kernel": report.Pass,
		}, 1, nil},
		{"runc declared gvisor", isolationGVisor, runcExec(), map[string]report.Status{
			"runs its own kernel": report.Fail, "booted after the pod": report.Fail, "virtio block devices": report.Fail, "DMI product name": report.NA,
			"only loopback": report.Pass, "an outbound request fails": report.Pass,
		}, 1, []string{"it shares the node's kernel", "this kernel was up before the pod existed"}},
		{"runc declared vm", isolationVM, runcExec(), map[string]report.Status{
			"runs its own kernel": report.Fail, "booted after the pod": report.Fail, "virtio block devices": report.Fail, "DMI product name": report.Fail,
		}, 1, nil},
		{"VM declared vm (blueprint)", isolationVM, blueprintExec(), map[string]report.Status{
			"runs its own kernel": report.Pass, "booted after the pod": report.Pass, "virtio block devices": report.Pass, "DMI product name": report.Pass,
		}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.Isolation = tc.iso
			code, rep, out := runWith(t, context.Background(), c, cfg, tc.ex, fakeDemand{c: c})
			for name, want := range tc.want {
				if got := status(t, rep, name); got != want {
					t.Errorf("%s: %s, want %s", name, got, want)
				}
			}
			if code != tc.exit {
				t.Errorf("exit %d, want %d: %v", code, tc.exit, rep.Failures())
			}
			for _, e := range tc.evidences {
				if !strings.Contains(out, e) {
					t.Errorf("output lacks %q", e)
				}
			}
			t.Log("\n" + out)
		})
	}
}

// Without an ordinary pod the kernel is compared with the node's reported
// kernel release instead of being skipped.
func TestKernelAgainstTheNodeWithoutAnOrdinaryPod(t *testing.T) {
	for _, tc := range []struct {
		name string
		ex   *fakeExec
		want report.Status
	}{{"gVisor", gvisorExec(), report.Pass}, {"runc", runcExec(), report.Fail}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			_ = c.kube.AppsV1().Deployments(testNS).Delete(context.Background(), "claim-exporter", metav1DeleteOptions())
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.Isolation = isolationGVisor
			_, rep, out := runWith(t, context.Background(), c, cfg, tc.ex, fakeDemand{c: c})
			if got := status(t, rep, "runs its own kernel"); got != tc.want || !strings.Contains(out, "status.nodeInfo.kernelVersion") {
				t.Fatalf("kernel check %s, want %s\n%s", got, tc.want, out)
			}
		})
	}
}

// An ordinary pod without uname (the exporter's distroless image) is not a
// fault: the kernel is compared with the node's instead, which still rejects
// a runc sandbox. Any other failed ordinary reading stays a FAIL.
func TestKernelAgainstTheNodeWhenTheOrdinaryPodHasNoUname(t *testing.T) {
	noUname := ExecResult{Err: fmt.Errorf(`Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "0f3a": OCI runtime exec failed: exec failed: unable to start container process: exec: "uname": executable file not found in $PATH: unknown`)}
	for _, tc := range []struct {
		name     string
		ex       *fakeExec
		ordinary ExecResult
		want     report.Status
		evidence string
	}{
		{"gVisor, no uname", gvisorExec(), noUname, report.Pass, "has no uname to run"},
		{"runc, no uname", runcExec(), noUname, report.Fail, "the node's own"},
		{"gVisor, exec refused", gvisorExec(), ExecResult{Err: fmt.Errorf("pods \"claim-exporter-0\" is forbidden")}, report.Fail, "was refused or failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.Isolation = isolationGVisor
			tc.ex.answers["ordinary uname -rv"] = tc.ordinary
			_, rep, out := runWith(t, context.Background(), c, cfg, tc.ex, fakeDemand{c: c})
			if got := status(t, rep, "runs its own kernel"); got != tc.want || !strings.Contains(out, tc.evidence) {
				t.Fatalf("kernel check %s, want %s with %q\n%s", got, tc.want, tc.evidence, out)
			}
		})
	}
}

func TestExecutableAbsent(t *testing.T) {
	for _, tc := range []struct {
		r    ExecResult
		want bool
	}{
		{ExecResult{Err: fmt.Errorf(`exec: "uname": executable file not found in $PATH: unknown`)}, true},
		{ExecResult{Stderr: "sh: uname: not found\n", ExitCode: 127}, true},
		{ExecResult{Err: fmt.Errorf("unable to upgrade connection: Forbidden")}, false},
		{ExecResult{Stderr: "cat: can't open '/proc/uptime': No such file or directory\n", ExitCode: 1}, false},
		{ExecResult{Stdout: "6.1.0\n"}, false},
	} {
		if got, _ := executableAbsent(tc.r); got != tc.want {
			t.Errorf("executableAbsent(%+v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}

// A second claim of ours that already exists at scale-up fails the step
// instead of being reused, and is not deleted.
func TestScaleUpRefusesExistingClaim(t *testing.T) {
	// Its fakes wait in wall time; the other waiting tests overlap it.
	t.Parallel()
	c := newCluster(t)
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	cfg.StepTimeout = 1500 * time.Millisecond
	ex := blueprintExec()
	// Created after the baseline checked, as a concurrent user would: in the same moment as
	// demand-1, so the claim is there whatever the machine's speed (a goroutine that polled for
	// demand-1 lost the race to verify's own demand-2 on a loaded machine).
	var once sync.Once
	c.dyn.PrependReactor("create", "sandboxclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured); ok && u.GetName() == "demand-1" {
			once.Do(func() {
				other := newDemandClaim(testNS, "demand-2", "warm-pool")
				other.SetLabels(map[string]string{"owner": "someone"})
				if err := c.dyn.Tracker().Create(gvr.SandboxClaim, other, testNS); err != nil {
					t.Errorf("the other user's demand-2: %v", err)
				}
			})
		}
		return false, nil, nil
	})
	code, rep, out := runWith(t, context.Background(), c, cfg, ex, fakeDemand{c: c})
	if code != 1 || status(t, rep, "scale up: create demand-2") != report.Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	got, err := c.dyn.Resource(gvr.SandboxClaim).Namespace(testNS).Get(context.Background(), "demand-2", metav1GetOptions())
	if err != nil || got.GetLabels()["owner"] != "someone" {
		t.Fatalf("the other user's demand-2 was touched: %v %v", err, got)
	}
}

// With minReplicaCount 0 the floor is 0, read from the ScaledObject (its HPA
// says 1): the baseline expects 0, and a first claim on the empty pool is a
// cold start by design, so the adoption checks are N/A with the reason and
// the readings, not a FAIL for the wrong reason. A claim adopted warm anyway
// is judged as usual.
func TestZeroFloor(t *testing.T) {
	for _, tc := range []struct {
		name string
		cold bool
		want report.Status
	}{{"cold start", true, report.NA}, {"adopted warm anyway", false, report.Pass}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			c.min = 0
			c.cold.Store(tc.cold)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			code, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
			if code != 0 {
				t.Fatalf("exit %d: %v\n%s", code, rep.Failures(), out)
			}
			for _, name := range []string{"the claim adopted a pre-booted sandbox", "the pod predates the claim", "the claim reported Ready within the bound"} {
				if got := status(t, rep, name); got != tc.want {
					t.Errorf("%s: %s, want %s", name, got, tc.want)
				}
			}
			if status(t, rep, "the pool holds the floor") != report.Pass || rep.ScaleUp[0].Expected != 0 {
				t.Errorf("the floor must be the ScaledObject's 0: %+v", rep.ScaleUp[0])
			}
			if tc.cold && !strings.Contains(out, "minReplicaCount is 0, so the pool held no warm sandbox") {
				t.Errorf("the N/A must say why\n%s", out)
			}
		})
	}
}
