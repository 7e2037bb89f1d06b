package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/framework"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
)

// faultDown is how long a part stays down: longer than the HPA's sync and KEDA's fallback
// threshold (3 failed reads at the 15 s pollingInterval), so both have acted on the outage.
const faultDown = 60 * time.Second

// poolWatch records every spec.replicas the API server reports for the pool, from a watch (a
// poll would miss a value written and overwritten between two reads).
type poolWatch struct {
	mu   sync.Mutex
	seen []replicasAt
	err  error
}

type replicasAt struct {
	at       time.Time
	replicas int64
}

func (e *realEnv) watchPool(ctx context.Context) *poolWatch {
	w := &poolWatch{}
	go func() {
		rv := ""
		for ctx.Err() == nil {
			wi, err := e.cluster.Dynamic.Resource(localcluster.SandboxWarmPoolGVR).Namespace(e.ns).Watch(ctx, metav1.ListOptions{
				FieldSelector: "metadata.name=" + e.pool, ResourceVersion: rv, AllowWatchBookmarks: true,
			})
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				time.Sleep(time.Second)
				continue
			}
			for ev := range wi.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				rv = u.GetResourceVersion()
				if n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas"); found && err == nil {
					w.mu.Lock()
					w.seen = append(w.seen, replicasAt{time.Now(), n})
					w.mu.Unlock()
				}
			}
		}
	}()
	return w
}

// since returns the values seen from t on, and the last value seen before t (the one in force).
func (w *poolWatch) since(t time.Time) []replicasAt {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []replicasAt
	for i, s := range w.seen {
		if !s.at.Before(t) {
			if len(out) == 0 && i > 0 {
				out = append(out, replicasAt{t, w.seen[i-1].replicas})
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(w.seen) > 0 {
		out = append(out, replicasAt{t, w.seen[len(w.seen)-1].replicas})
	}
	return out
}

// partDownHoldsThePool kills one control-plane process by its pid while 2 claims are held
// (spec.replicas 2 on the stack's claims mapping), raises demand to 3 while it is down, and
// restarts it as its supervisor would. The pool must never go below the 2 held claims' size
// (from the API server's own record, a watch), the held claims must stay Ready, and after the
// restart the pool must reach 3. It returns the recovery time.
func (e *realEnv) partDownHoldsThePool(ctx context.Context, t *testing.T, part string) time.Duration {
	held := []string{"fault-1", "fault-2"}
	defer e.holdClaims(ctx, t, held...)()
	framework.Eventually(t, ctx, "spec.replicas=2 for 2 held claims", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return e.specReplicasIs(ctx, 2)
	})
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := e.watchPool(wctx)
	time.Sleep(time.Second)

	killed := time.Now()
	if err := e.cluster.Kill(part); err != nil {
		t.Fatal(err)
	}
	time.Sleep(faultDown / 3)
	e.createClaim(ctx, t, "fault-3") // demand up while the part is down
	time.Sleep(faultDown - faultDown/3)
	if err := e.cluster.Restart(part); err != nil {
		t.Fatalf("restarting %s: %v", part, err)
	}
	back := time.Now()
	var recovery time.Duration
	framework.Eventually(t, ctx, fmt.Sprintf("spec.replicas=3 for 3 claims after %s is back", part), 3*time.Minute, func(ctx context.Context) (bool, error) {
		ok, err := e.specReplicasIs(ctx, 3)
		if ok {
			recovery = time.Since(back)
		}
		return ok, err
	})
	e.deleteClaim(ctx, t, "fault-3") // demand down after it is back
	framework.Eventually(t, ctx, "spec.replicas=2 once the third claim is gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return e.specReplicasIs(ctx, 2)
	})
	stopWatch()

	// Judge what the API server recorded: never below the 2 held claims' size.
	seen := w.since(killed)
	values, spurious := belowFloor(seen, killed, 2)
	if len(seen) == 0 {
		t.Fatalf("%s: the watch on the pool saw nothing (last error %v): no evidence", part, w.err)
	}
	t.Logf("%s down %s (SIGKILL, restarted by pid record): spec.replicas from the watch %s; back to demand %s after the restart",
		part, faultDown, strings.Join(values, " "), recovery.Round(time.Second))
	if spurious > 0 {
		t.Errorf("%s: %d spec.replicas below 2 while 2 claims were held: %s", part, spurious, strings.Join(values, " "))
	}
	for _, n := range held {
		u, err := e.cluster.Dynamic.Resource(framework.ClaimGVR).Namespace(e.ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: held claim %s after the fault: %v", part, n, err)
			continue
		}
		if !claimReady(u) {
			t.Errorf("%s: held claim %s is not Ready after the fault: %v", part, n, u.Object["status"])
		}
	}
	return recovery
}

func claimReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// specReplicasIs reads spec.replicas: true when it is want; a failed read is an error, and so is
// another value (saying what it was), so a wait that ends reports the last reading.
func (e *realEnv) specReplicasIs(ctx context.Context, want int64) (bool, error) {
	n, err := e.specReplicas(ctx)
	if err != nil {
		return false, err
	}
	if n != want {
		return false, fmt.Errorf("spec.replicas=%d", n)
	}
	return true, nil
}

// belowFloor prints the values seen (value@+seconds from t0) and counts those below floor: a
// spec.replicas under what the held claims map to is a spurious scale-down.
func belowFloor(seen []replicasAt, t0 time.Time, floor int64) ([]string, int) {
	var values []string
	spurious := 0
	for _, s := range seen {
		values = append(values, fmt.Sprintf("%d@+%.0fs", s.replicas, s.at.Sub(t0).Seconds()))
		if s.replicas < floor {
			spurious++
		}
	}
	return values, spurious
}
