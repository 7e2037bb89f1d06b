package verifier

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// A failed read is retried until the deadline, never taken as a value: a read error that
// clears is waited out, and one that does not is reported with the count of reads when the
// wait times out.
func TestWaitRetriesAFailedReadAndReportsTheLast(t *testing.T) {
	c := newCluster(t)
	c.keda.Store(false)
	c.start()
	c.dyn.PrependWatchReactor("sandboxwarmpools", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, errors.New("watch is forbidden") // every reading is a GET
	})
	ri := c.dyn.Resource(gvr.SandboxWarmPool).Namespace(testNS)
	var failing atomic.Int32 // how many GETs fail from now on (-1: all)
	c.dyn.PrependReactor("get", "sandboxwarmpools", func(k8stesting.Action) (bool, runtime.Object, error) {
		if n := failing.Load(); n != 0 {
			if n > 0 {
				failing.Add(-1)
			}
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})

	failing.Store(3)
	var buf syncBuffer
	// A minute: the wait ends at the fourth read, however slow the machine.
	_, at, err := waitObject(context.Background(), newReport(&buf), ri, "warm-pool", "spec.replicas=1", time.Minute, 10*time.Millisecond, specIs(1, nil))
	if err != nil || at.IsZero() {
		t.Fatalf("three failed reads ended the wait: %v", err)
	}
	if !strings.Contains(buf.String(), "waiting up to 1m0s for spec.replicas=1 (nothing read yet; the latest read failed: reading warm-pool: etcdserver: request timed out)") {
		t.Fatalf("the wait does not say its first read failed:\n%s", buf.String())
	}

	// The first read answers 1; every later one fails: the timeout names both. 2 s: a failed
	// read must come inside it, 10 ms after the first (a loaded machine has let 300 ms pass).
	failing.Store(0)
	first := true
	_, _, err = waitObject(context.Background(), newReport(&buf), ri, "warm-pool", "spec.replicas=2", 2*time.Second, 10*time.Millisecond,
		func(u *unstructured.Unstructured) (bool, string, error) {
			if first {
				first = false
				failing.Store(-1)
			}
			return specIs(2, nil)(u)
		})
	if !errors.Is(err, errTimeout) || !regexp.MustCompile(`\(last value read: 1; (\d+) of (\d+) reads failed, the last read error: reading warm-pool: etcdserver: request timed out\)`).MatchString(err.Error()) {
		t.Fatalf("got %v, want a timeout that says what was read and the last read error", err)
	}
}

// The evidence of a check whose wait saw only failed reads says so: here the exporter never
// answers, and once it answers after failing, the check passes.
func TestExporterCheckReportsTheLastReadError(t *testing.T) {
	c := newCluster(t)
	c.start()
	var buf syncBuffer
	rep := newReport(&buf)
	down := fakeDemand{err: errors.New(`Get "http://claim-exporter/demand": dial tcp: connection refused`)}
	newRunner(testConfig(), c.kube, c.dyn, blueprintExec(), down, rep).exporterServes(context.Background(), "demand", 0)
	ev := rep.Find("the exporter served active_claims=0")[0].Evidence
	if status(t, rep, "the exporter served active_claims=0") != report.Fail ||
		!regexp.MustCompile(`timed out after 1s waiting for the exporter to serve active_claims=0 \(no read succeeded; (\d+) of (\d+) reads failed, the last read error: Get "http://claim-exporter/demand": dial tcp: connection refused\)`).MatchString(ev) {
		t.Fatalf("the FAIL does not report the last read error: %s", ev)
	}

	var buf2 syncBuffer
	rep = newReport(&buf2)
	flaky := &flakyDemand{DemandReader: fakeDemand{c: c}, failures: 3}
	patient := testConfig()
	patient.ExporterTimeout = time.Minute // the wait ends at the fourth read, however slow the machine
	newRunner(patient, c.kube, c.dyn, blueprintExec(), flaky, rep).exporterServes(context.Background(), "demand", 0)
	if status(t, rep, "the exporter served active_claims=0") != report.Pass || flaky.reads != 4 {
		t.Fatalf("three failed reads, then an answer: %d reads\n%s", flaky.reads, buf2.String())
	}
}

// flakyDemand fails its first reads.
type flakyDemand struct {
	DemandReader
	failures, reads int
}

func (f *flakyDemand) Read(ctx context.Context) (DemandReading, error) {
	if f.reads++; f.reads <= f.failures {
		return DemandReading{}, errors.New("503 Service Unavailable")
	}
	return f.DemandReader.Read(ctx)
}

// With the watch refused, the wait still sees the change by polling, and
// prints what it waits for.
func TestWaitFallsBackToPolling(t *testing.T) {
	c := newCluster(t)
	c.keda.Store(false)
	c.start()
	c.dyn.PrependWatchReactor("sandboxwarmpools", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, errors.New("watch is forbidden")
	})
	ri := c.dyn.Resource(gvr.SandboxWarmPool).Namespace(testNS)
	var buf syncBuffer
	go func() {
		// The change comes once the wait has read 1 and said so, so it is seen by polling.
		for deadline := time.Now().Add(time.Minute); !strings.Contains(buf.String(), "(now 1)") && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		p, _ := ri.Get(context.Background(), "warm-pool", metav1.GetOptions{})
		_ = unstructured.SetNestedField(p.Object, int64(2), "spec", "replicas")
		_, _ = ri.Update(context.Background(), p, metav1.UpdateOptions{})
	}()
	_, at, err := waitObject(context.Background(), newReport(&buf), ri, "warm-pool", "spec.replicas=2", time.Minute, 10*time.Millisecond, specIs(2, nil))
	if err != nil || at.IsZero() {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(buf.String(), "waiting up to 1m0s for spec.replicas=2 (now 1)") || !strings.Contains(buf.String(), "polling") {
		t.Fatalf("progress not printed:\n%s", buf.String())
	}
}

// A wait that runs out of time says so and what it last read.
func TestWaitTimeout(t *testing.T) {
	c := newCluster(t)
	c.keda.Store(false)
	c.start()
	var buf syncBuffer
	_, _, err := waitObject(context.Background(), newReport(&buf), c.dyn.Resource(gvr.SandboxWarmPool).Namespace(testNS), "warm-pool", "spec.replicas=3", 200*time.Millisecond, 10*time.Millisecond, specIs(3, nil))
	if !errors.Is(err, errTimeout) || !strings.Contains(err.Error(), "last read: 1") {
		t.Fatalf("got %v", err)
	}
}

func TestReportFinalLine(t *testing.T) {
	var buf syncBuffer
	r := newReport(&buf)
	r.Pass("p", "a", "x")
	r.Skip("p", "b", "no kubelet")
	if got := r.FinalLine(); got != "1/1 checks passed (1 skipped, not counted as passed)" || !r.OK() {
		t.Fatalf("%q", got)
	}
	r.Fail("p", "c", "y")
	if got := r.FinalLine(); got != "1/2 checks passed (1 skipped, not counted as passed); 1 FAILED" || r.OK() {
		t.Fatalf("%q", got)
	}
	if !strings.Contains(buf.String(), "SKIP b: no kubelet") {
		t.Fatal("a check must print its status, name and evidence")
	}
}

// Inside the control's window a failed read fails the window (a reading that could not be taken
// proves nothing about that moment), and the evidence says which read and why; the stack is
// put back all the same.
func TestControlWindowFailsAtAFailedRead(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	c.start()
	var inWindow atomic.Bool // the load is on: from demand-3's create to its delete
	c.dyn.PrependReactor("create", "sandboxclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured); ok && u.GetName() == "demand-3" {
			inWindow.Store(true)
		}
		return false, nil, nil
	})
	c.dyn.PrependReactor("delete", "sandboxclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.DeleteAction).GetName() == "demand-3" {
			inWindow.Store(false)
		}
		return false, nil, nil
	})
	c.dyn.PrependReactor("get", "sandboxwarmpools", func(k8stesting.Action) (bool, runtime.Object, error) {
		if inWindow.Load() {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	code, rep, out := runWith(t, context.Background(), c, controlConfig(), blueprintExec(), fakeDemand{c: c})
	const check = "spec.replicas stays flat without the autoscaler"
	if code != 1 || status(t, rep, check) != report.Fail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if ev := rep.Find(check)[0].Evidence; !regexp.MustCompile(`after \d+ reading\(s\): a read \d+(\.\d+)?m?s into the window failed: reading sandboxwarmpool/warm-pool: etcdserver: request timed out`).MatchString(ev) {
		t.Fatalf("the FAIL does not say which read failed and why: %s", ev)
	}
	if status(t, rep, "the ScaledObject is back and not terminating") != report.Pass {
		t.Fatalf("the stack was not put back\n%s", out)
	}
}
