package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract/gvr"
)

// A failed read ends the wait as an error; it is never taken as a value.
func TestWaitFailedReadIsAnError(t *testing.T) {
	c := newCluster(t)
	c.keda.Store(false)
	c.start()
	ri := c.dyn.Resource(gvr.SandboxWarmPool).Namespace(testNS)
	calls := 0
	c.dyn.PrependReactor("get", "sandboxwarmpools", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls > 1 {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	var buf syncBuffer
	_, _, err := waitObject(context.Background(), newReport(&buf), ri, "warm-pool", "spec.replicas=0", 2*time.Second, 10*time.Millisecond, specIs(0, nil))
	if err == nil || !strings.Contains(err.Error(), "request timed out") || errors.Is(err, errTimeout) {
		t.Fatalf("got %v, want the read error", err)
	}
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
	go func() {
		time.Sleep(100 * time.Millisecond)
		p, _ := ri.Get(context.Background(), "warm-pool", metav1.GetOptions{})
		_ = unstructured.SetNestedField(p.Object, int64(2), "spec", "replicas")
		_, _ = ri.Update(context.Background(), p, metav1.UpdateOptions{})
	}()
	var buf syncBuffer
	_, at, err := waitObject(context.Background(), newReport(&buf), ri, "warm-pool", "spec.replicas=2", 2*time.Second, 10*time.Millisecond, specIs(2, nil))
	if err != nil || at.IsZero() {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(buf.String(), "waiting up to 2s for spec.replicas=2 (now 1)") || !strings.Contains(buf.String(), "polling") {
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
