package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
)

// processDownFor is how long a control-plane part stays down: demand rises a third of the way in
// (runFault), and a whole HPA sync must pass after that with the part still down, so the HPA has
// had its chance to act without it; 5 s more for a sync's jitter. 27.5 s at EKS's 15 s sync.
func processDownFor(hpaSync time.Duration) time.Duration { return hpaSync*3/2 + 5*time.Second }

// exporterDownFor is how long every exporter replica stays down: KEDA's fallback answers only
// after 3 failed reads, and it counts a failed read per HPA request as well as per poll, so up to
// 3 HPA syncs pass before it does; one more sync then reads the fallback. 60 s at 15 s.
func exporterDownFor(hpaSync time.Duration) time.Duration { return 4 * hpaSync }

// heldClaims is the demand every fault holds: spec.replicas 2 on the claims mapping, above the
// floor of 1, so a shrink is visible. They are created once and held through every fault.
var heldClaims = []string{"fault-1", "fault-2"}

// A fault takes one part of the loop down and brings it back as its supervisor would.
type fault struct {
	part        string
	down        time.Duration
	stop, start func(ctx context.Context) error
	// apiDown: the API server cannot take a write while the part is down (the API server,
	// etcd), so demand rises just after the return instead of during the outage.
	apiDown bool
}

// partFault is a control-plane process a fault row takes down, and what its row must show.
type partFault struct {
	part    string // its process name in the local control plane
	apiDown bool   // see fault.apiDown
	shows   string
}

// Where each control-plane fault runs. The loop's controllers (KEDA's operator and metrics
// adapter, the HPA in the controller manager, agent-sandbox's controller) are reached by nothing
// on a node, so their rows run on a control plane of simulated nodes with the exporter a local
// process (TestLiveSimulatedNodeEndToEnd, in the lane beside the real node's). The real node's
// kubelet, the API server and etcd are what every client on the node (the kubelet, the exporter's
// pods, cluster DNS) depends on, so theirs run under the deployed stack on the real node
// (TestLiveRealNodeEndToEnd). The API server and etcd go last: every client's backoff after them
// is theirs to show.
var (
	loopControllerFaults = []partFault{
		{"keda-operator", false, "never below 2, and 3 once it is back"},
		{"keda-adapter", false, "never below 2 (the HPA holds on a failed metric read), and 3 once it is back"},
		{"kube-controller-manager", false, "never below 2 (nothing writes the pool), and 3 once it is back"},
		{"agent-sandbox-controller", false, "never below 2, the held claims stay bound, and the third binds once it is back"},
	}
	realNodeFaults = []partFault{
		{localcluster.RealNodeName(0) + "-kubelet", false, "never below 2, no held claim lost"},
		{"kube-apiserver", true, "never below 2, and 3 once it takes writes again"},
		{"etcd", true, "never below 2, and 3 once it is back"},
	}
)

// processFault kills a control-plane process by the pid the cluster recorded (SIGKILL to its
// group, never by name) and restarts it with its own command.
func (e *stackRun) processFault(part string, apiDown bool) fault {
	return fault{
		part:    part,
		down:    processDownFor(e.cluster.HPASyncPeriod),
		apiDown: apiDown,
		stop:    func(context.Context) error { return e.cluster.Kill(part) },
		start:   func(context.Context) error { return e.cluster.Restart(part) },
	}
}

// exporterOutage stops every exporter replica (the Deployment scaled to 0, as a bad rollout or a
// lost node pool would) and scales it back: the blueprint's "if the exporter stops, the HPA holds
// the size it last wrote", which KEDA's fallback implements.
func (e *realEnv) exporterOutage() fault {
	ns := e.outputs.String("stackNamespace")
	scale := func(ctx context.Context, n int) error {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		_, err := e.cluster.Client.AppsV1().Deployments(ns).Patch(ctx, contract.ExporterName, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-faults"})
		return err
	}
	return fault{
		part:  "the exporter (all replicas)",
		down:  exporterDownFor(e.cluster.HPASyncPeriod),
		stop:  func(ctx context.Context) error { return scale(ctx, 0) },
		start: func(ctx context.Context) error { return scale(ctx, contract.DefaultExporterReplicas) },
	}
}

// faultResult is what one fault did, from the API server's own record.
type faultResult struct {
	part                      string
	down                      time.Duration
	values                    []string // spec.replicas from the watch, value@+seconds after the stop
	spurious                  int      // values below the held claims' size
	lost                      []string // held claims deleted or gone during the fault
	notReady                  map[string]time.Duration
	fallback                  string        // when KEDA's Fallback condition was True, relative to the stop
	errorsBefore, errorsAfter float64       // KEDA's scaler error counter for the pool's ScaledObject
	errorsUnread              error         // a failed read of that counter, before or after
	latency                   time.Duration // a claim created once the part was back, warm sandboxes free: create → Ready
	recovery                  time.Duration // from the return to spec.replicas matching the 3 claims
}

// runFault, with the 2 held claims (the caller holds them), takes the part down for f.down, raises demand to 3 (while it is
// down, or just after for an API outage), brings it back, times a claim with warm sandboxes free,
// then lowers demand to 2 again. It reads the pool's spec.replicas and the claims from watches
// (every value the API server recorded) and KEDA's Fallback condition from the ScaledObject; it
// judges nothing but the held claims' survival: the caller judges spec.replicas.
func (e *stackRun) runFault(ctx context.Context, t *testing.T, f fault) faultResult {
	r := faultResult{part: f.part, down: f.down}
	framework.Eventually(t, ctx, "spec.replicas=2 for 2 held claims", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return e.specReplicasIs(ctx, 2)
	})
	// Both held claims bound and Ready first: a claim still binding (a cold start, on a stack
	// just up) would read as not Ready during the fault, which the fault did not cause.
	e.heldClaimsReady(ctx, t, "the held claims Ready before the fault")
	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	pool := framework.WatchObjects(wctx, e.cluster.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(e.ns), "metadata.name="+e.pool, framework.SpecReplicasOf)
	claims := framework.WatchObjects(wctx, e.cluster.Dynamic.Resource(gvr.SandboxClaim).Namespace(e.ns), "", framework.ClaimStateOf)
	fallback := framework.PollFallback(wctx, e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns), contract.ScaledObjectName)
	errorsBefore, errBefore := e.scalerErrors(ctx)
	time.Sleep(time.Second)

	down := f.down
	stopped := time.Now()
	if err := f.stop(ctx); err != nil {
		t.Fatalf("stopping %s: %v", f.part, err)
	}
	time.Sleep(down / 3)
	if !f.apiDown {
		e.createClaim(ctx, t, "fault-3") // demand up while the part is down
	}
	time.Sleep(down - down/3)
	if err := f.start(ctx); err != nil {
		t.Fatalf("bringing %s back: %v", f.part, err)
	}
	back := time.Now()

	// A claim made as soon as the API answers, with warm sandboxes free, should bind at once.
	framework.Eventually(t, ctx, "a warm sandbox free (status.readyReplicas>=1) after the return", framework.SandboxStartBound, func(ctx context.Context) (bool, error) {
		return e.readyReplicasAtLeast(ctx, 1)
	})
	probeAt := time.Now()
	e.createClaim(ctx, t, "fault-probe")
	framework.Eventually(t, ctx, "the claim made after the return to be Ready", framework.SandboxStartBound, func(context.Context) (bool, error) {
		at, ok := framework.FirstReady(claims.Since(probeAt), "fault-probe", probeAt)
		r.latency = at.Sub(probeAt)
		return ok, nil
	})
	e.deleteClaim(ctx, t, "fault-probe")
	if f.apiDown {
		e.createClaim(ctx, t, "fault-3") // demand up once the API takes writes again
	}
	// Up to 6 minutes: a new exporter pod on the default path compiles before it serves.
	framework.Eventually(t, ctx, fmt.Sprintf("spec.replicas=3 for 3 claims after %s is back", f.part), 6*time.Minute, func(ctx context.Context) (bool, error) {
		ok, err := e.specReplicasIs(ctx, 3)
		if ok {
			r.recovery = time.Since(back)
		}
		return ok, err
	})
	e.deleteClaim(ctx, t, "fault-3") // demand down after it is back
	framework.Eventually(t, ctx, "spec.replicas=2 once the third claim is gone", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return e.specReplicasIs(ctx, 2)
	})
	// The held claims must come back Ready (a kubelet outage marks them not Ready meanwhile).
	e.heldClaimsReady(ctx, t, "the held claims Ready after the fault")
	errorsAfter, errAfter := e.scalerErrors(ctx)
	stopWatching()

	seen := pool.Since(stopped)
	if len(seen) == 0 {
		t.Fatalf("%s: the watch on the pool saw nothing (last error %v): no evidence", f.part, pool.LastErr())
	}
	r.values, r.spurious = framework.BelowFloor(seen, stopped, int64(len(heldClaims)))
	events := claims.Since(stopped)
	for _, n := range heldClaims {
		if framework.ClaimDeleted(events, n) {
			r.lost = append(r.lost, n)
		}
	}
	r.notReady = map[string]time.Duration{}
	for _, n := range heldClaims {
		if d := framework.NotReadyFor(events, n, stopped, time.Now()); d > 0 {
			r.notReady[n] = d
		}
	}
	r.fallback = fallback.Spans(stopped)
	r.errorsBefore, r.errorsAfter, r.errorsUnread = errorsBefore, errorsAfter, errors.Join(errBefore, errAfter)
	t.Logf("%s down %s: spec.replicas from the watch %s; held claims lost %v, not Ready %v; KEDA fallback %s, scaler errors %s; a claim after the return Ready in %s; back to demand %s after the return",
		f.part, down, strings.Join(r.values, " "), r.lost, r.notReady, r.fallback, r.scalerErrors(), r.latency.Round(time.Millisecond), r.recovery.Round(time.Second))
	return r
}

// heldClaimsReady waits until every held claim reads Ready.
func (e *stackRun) heldClaimsReady(ctx context.Context, t *testing.T, what string) {
	framework.Eventually(t, ctx, what, framework.SandboxStartBound, func(ctx context.Context) (bool, error) {
		for _, n := range heldClaims {
			u, err := e.cluster.Dynamic.Resource(gvr.SandboxClaim).Namespace(e.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("held claim %s: %w", n, err)
			}
			if !framework.ClaimReady(u) {
				return false, fmt.Errorf("held claim %s is not Ready: %v", n, u.Object["status"])
			}
		}
		return true, nil
	})
}

// faultHoldsThePool runs the fault and fails on any spec.replicas below the held claims' size and
// on any held claim lost.
func (e *stackRun) faultHoldsThePool(ctx context.Context, t *testing.T, f fault) faultResult {
	r := e.runFault(ctx, t, f)
	if r.spurious > 0 {
		t.Errorf("%s: %d spec.replicas below %d while %d claims were held: %s", f.part, r.spurious, len(heldClaims), len(heldClaims), strings.Join(r.values, " "))
	}
	if len(r.lost) > 0 {
		t.Errorf("%s: held claims lost: %v", f.part, r.lost)
	}
	return r
}

// faultTable is the markdown table docs/measurements.md keeps.
func faultTable(rows []faultResult) string {
	var b strings.Builder
	b.WriteString("| part (time down) | spec.replicas from the watch (value @ s after the stop) | below 2 | claims lost | held claims not Ready | KEDA Fallback=True | scaler errors | claim after the return: create → Ready | back to demand (3) after the return |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		notReady := "0"
		if len(r.notReady) > 0 {
			var parts []string
			for _, n := range heldClaims {
				if d, ok := r.notReady[n]; ok {
					parts = append(parts, fmt.Sprintf("%s %.0f s", n, d.Seconds()))
				}
			}
			notReady = strings.Join(parts, ", ")
		}
		fmt.Fprintf(&b, "| %s (%.0f s) | %s | %d | %d | %s | %s | %s | %s | %.0f s |\n", r.part, r.down.Seconds(), strings.Join(r.values, " "), r.spurious, len(r.lost), notReady,
			r.fallback, r.scalerErrors(), r.latency.Round(time.Millisecond), r.recovery.Seconds())
	}
	return b.String()
}

// setFallback patches the ScaledObject's fallback (behavior and replicas), by a field manager of
// the test's own: the reject run makes it static, then puts the program's values back.
func (e *realEnv) setFallback(ctx context.Context, t *testing.T, behavior string, replicas int) {
	patch := fmt.Sprintf(`{"spec":{"fallback":{"behavior":%q,"replicas":%d}}}`, behavior, replicas)
	if _, err := e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns).Patch(ctx, contract.ScaledObjectName, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-faults"}); err != nil {
		t.Fatalf("patching the ScaledObject's fallback: %v", err)
	}
}

// specReplicasIs reads spec.replicas: true when it is want; a failed read is an error, and so is
// another value (saying what it was), so a wait that ends reports the last reading.
func (e *stackRun) specReplicasIs(ctx context.Context, want int64) (bool, error) {
	n, err := e.specReplicas(ctx)
	if err != nil {
		return false, err
	}
	if n != want {
		return false, fmt.Errorf("spec.replicas=%d", n)
	}
	return true, nil
}

// readyReplicasAtLeast reads the pool's status.readyReplicas (warm sandboxes booted and free).
func (e *stackRun) readyReplicasAtLeast(ctx context.Context, want int64) (bool, error) {
	u, err := e.cluster.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(e.ns).Get(ctx, e.pool, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	n, _, err := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	if err != nil {
		return false, err
	}
	if n < want {
		return false, fmt.Errorf("status.readyReplicas=%d", n)
	}
	return true, nil
}

// processFaults holds 2 claims and takes each of parts down in turn, alone on the control plane
// (every stack shares these parts), and prints the table. The claims are held through every
// fault: each starts where the last ended, at spec.replicas 2.
func (e *stackRun) processFaults(ctx context.Context, t *testing.T, group string, parts []partFault) {
	defer e.holdClaims(ctx, t, heldClaims...)()
	runSteps(ctx, t, e.processFaultSteps(group, parts))
}

// exporterFaults holds 2 claims, takes every replica of this stack's exporter down, then breaks
// the guard once (a static fallback of 1) to show the judge catches a scale-down, and prints the
// table. Nothing they stop or patch is shared (the exporter's Deployment and the ScaledObject are
// this stack's), so they run beside the other stacks instead of alone.
func (e *realEnv) exporterFaults(ctx context.Context, t *testing.T) {
	defer e.holdClaims(ctx, t, heldClaims...)()
	runSteps(ctx, t, e.exporterOutageSteps())
}

// processFaultSteps are processFaults' steps, one per part, and the table.
func (e *stackRun) processFaultSteps(group string, parts []partFault) []step {
	var rows []faultResult
	var steps []step
	for _, p := range parts {
		f := e.processFault(p.part, p.apiDown)
		steps = append(steps, step{
			name: fmt.Sprintf("%s down for %s while 2 claims are held: %s", f.part, f.down, p.shows),
			run: func(ctx context.Context, t *testing.T) {
				rows = append(rows, e.faultHoldsThePool(ctx, t, f))
			},
		})
	}
	return append(steps, e.faultTableStep(group, &rows))
}

// exporterOutageSteps are exporterFaults' steps: the outage, the reject run, and the table.
func (e *realEnv) exporterOutageSteps() []step {
	var rows []faultResult
	exporterDown := exporterDownFor(e.cluster.HPASyncPeriod)
	return []step{
		{
			name: fmt.Sprintf("the exporter (all replicas) down for %s while 2 claims are held: KEDA's fallback holds 2, its Fallback condition and scaler error counter say so", exporterDown),
			run: func(ctx context.Context, t *testing.T) {
				r := e.faultHoldsThePool(ctx, t, e.exporterOutage())
				rows = append(rows, r)
				if !strings.Contains(r.fallback, "+") {
					t.Errorf("the exporter was unreadable for %s and KEDA's Fallback condition was never True (%s): a frozen pool would be silent", exporterDown, r.fallback)
				}
				if r.errorsUnread != nil || r.errorsAfter <= r.errorsBefore {
					t.Errorf("keda_scaler_detail_errors_total did not rise while the exporter was unreadable: %s", r.scalerErrors())
				}
			},
		},
		{
			name: fmt.Sprintf("reject: with the fallback made static at 1, the same exporter outage (%s) shrinks the pool below 2, and the judge counts it", exporterDown),
			run: func(ctx context.Context, t *testing.T) {
				e.setFallback(ctx, t, "static", 1)
				defer e.setFallback(ctx, t, "currentReplicasIfHigher", contract.DefaultFallbackReplicas)
				f := e.exporterOutage()
				f.part = "reject: " + f.part + ", fallback static at 1"
				r := e.runFault(ctx, t, f)
				rows = append(rows, r)
				if r.spurious == 0 {
					t.Errorf("a static fallback of 1 during an exporter outage left spec.replicas at or above 2 (%s): the judge would not catch a scale-down", strings.Join(r.values, " "))
				}
			},
		},
		e.faultTableStep("the exporter", &rows),
	}
}

// faultTableStep prints the rows its group's steps appended (docs/measurements.md keeps them).
func (e *stackRun) faultTableStep(group string, rows *[]faultResult) step {
	return step{
		name: "the fault table (docs/measurements.md keeps it)",
		run: func(ctx context.Context, t *testing.T) {
			// Each row names its own time down.
			t.Logf("faults of %s while 2 claims were held (HPA sync %s):\n%s", group, e.cluster.HPASyncPeriod, faultTable(*rows))
		},
	}
}

// scalerErrors prints the counter's two readings, or why they are missing.
func (r faultResult) scalerErrors() string {
	if r.errorsUnread != nil {
		return fmt.Sprintf("unread (%v)", r.errorsUnread)
	}
	return fmt.Sprintf("%.0f → %.0f", r.errorsBefore, r.errorsAfter)
}

// scalerErrors reads KEDA's operator metrics and sums keda_scaler_detail_errors_total over the
// stack's ScaledObject: what the README tells a platform team to alert on.
func (e *stackRun) scalerErrors(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.cluster.KEDAOperatorMetricsURL(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("KEDA's metrics answered %s", resp.Status)
	}
	return framework.SumMetric(bufio.NewScanner(resp.Body), "keda_scaler_detail_errors_total", `namespace="`+e.ns+`"`, `scaledObject="`+contract.ScaledObjectName+`"`)
}
