package verifier

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// Runner runs one pool's phases: it holds the clients, the pool's config (cfg's single keys
// are the pool's) and what earlier phases learned (the HPA's bounds, the mapping, the claimed
// pod, the measured scale-up time).
type Runner struct {
	cfg    Config
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	exec   Execer
	demand DemandReader
	rep    *report.Scoped
	rest   *Restorer

	min, max int64
	target   float64
	headroom int64 // warm sandboxes the ScaledObject's formula keeps above demand
	// formula is the arrivals policy's scalingModifiers formula; nil: the claims mapping.
	formula *formulaMapping
	// pollingInterval is the ScaledObject's (KEDA's default 30 s when absent).
	pollingInterval time.Duration
	// mapped: the precondition read a mapping every step can be held to.
	mapped       bool
	downPace     scaleDownPace // what the HPA's scale-down behaviour lets a drop take
	claimedPod   *corev1.Pod
	upDecision   time.Duration // slowest up step whose expected value changed
	lastExpected int64
}

// newRunner is the runner of a one-pool run (the pool's checks carry no pool label).
func newRunner(cfg Config, kube kubernetes.Interface, dyn dynamic.Interface, ex Execer, demand DemandReader, rep *report.Report) *Runner {
	return newPoolRunner(cfg, kube, dyn, ex, demand, rep.ForPool(cfg.Pool, cfg.Namespace, false, true))
}

// newPoolRunner runs one pool of the stack with its own slice of the report.
func newPoolRunner(cfg Config, kube kubernetes.Interface, dyn dynamic.Interface, ex Execer, demand DemandReader, rep *report.Scoped) *Runner {
	return &Runner{cfg: cfg, kube: kube, dyn: dyn, exec: ex, demand: demand, rep: rep,
		rest: newRestorer(dyn, cfg.Namespace, rep, cfg.Poll)}
}

// errStop ends the remaining phases: what they would assert depends on
// something that already failed (the reason is a FAIL check already).
var errStop = errors.New("stopping")

type phase struct {
	title string
	run   func(context.Context) error
}

// Run runs the selected phases in order. Checks carry the result; the
// caller runs the exit handler (r.rest.Run) after it, whatever happened, and
// says when an interrupt cut the run short.
func (r *Runner) Run(ctx context.Context) {
	var phases []phase
	pre := phase{"precondition: the HPA KEDA created targets the SandboxWarmPool", r.precondition}
	switch r.cfg.Phase {
	case "demand", "all":
		phases = append(phases, pre,
			phase{"access: the exporter's ServiceAccount reads claims and nothing else", r.access},
			phase{"baseline: no demand, the pool holds the warm floor", func(ctx context.Context) error { _, err := r.baseline(ctx, "baseline"); return err }},
			phase{"one claim adopts a pre-booted pod", r.adoption},
			phase{"the claimed pod is a sandbox, with no network", r.readings},
			phase{fmt.Sprintf("drive demand UP to %d claims", r.cfg.LoadCap), r.scaleUp},
			phase{"drive demand DOWN to 0 claims", r.scaleDown},
		)
		if r.cfg.Phase == "all" {
			phases = append(phases, phase{"control: the same demand with the ScaledObject removed", r.control})
		}
	case "control":
		phases = append(phases, pre, phase{"control: the same demand with the ScaledObject removed", r.control})
	}
	for i, p := range phases {
		if ctx.Err() != nil {
			break
		}
		r.rep.Section(i+1, len(phases), r.rep.Label()+p.title)
		if err := p.run(ctx); err != nil {
			if ctx.Err() != nil {
				break
			}
			skipped := len(phases) - i - 1
			r.rep.Printf("stopping: %v (%d later phase(s) not run)", err, skipped)
			if skipped > 0 {
				r.rep.Skip("run", "later phases", fmt.Sprintf("%d phase(s) not run because %v", skipped, err))
			}
			break
		}
	}
}

// expected is the HPA's decision for n claims with AverageValue: one warm
// sandbox per target claims, clamped to [min, max].
func (r *Runner) expected(n int) int64 {
	e := int64(math.Ceil(float64(n)/r.target)) + r.headroom
	return max(r.min, min(e, r.max))
}

// countClaims counts what the exporter counts: claims in the namespace that
// match its selector (empty = all).
func (r *Runner) countClaims(ctx context.Context) (int, error) {
	l, err := r.dyn.Resource(gvr.SandboxClaim).Namespace(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: r.cfg.ClaimSelector})
	if err != nil {
		return 0, fmt.Errorf("listing sandboxclaims: %w", err)
	}
	return len(l.Items), nil
}

// readPoolNow is one GET of the pool; an error is returned, never a value.
func (r *Runner) readPoolNow(ctx context.Context) (poolReading, error) {
	u, err := r.dyn.Resource(gvr.SandboxWarmPool).Namespace(r.cfg.Namespace).Get(ctx, r.cfg.Pool, metav1.GetOptions{})
	if err != nil {
		return poolReading{}, fmt.Errorf("reading sandboxwarmpool/%s: %w", r.cfg.Pool, err)
	}
	return readPool(u)
}

// exporterServes waits until the exporter serves active_claims=n and records
// the check. A failed read keeps it waiting (and is shown), never counts as 0.
func (r *Runner) exporterServes(ctx context.Context, phase string, n int) {
	var last DemandReading
	_, err := pollUntil(ctx, r.rep, fmt.Sprintf("the exporter to serve active_claims=%d", n), r.cfg.ExporterTimeout, r.cfg.Poll,
		func(ctx context.Context) (bool, string, error) {
			d, err := r.demand.Read(ctx)
			if err != nil {
				return false, "", err
			}
			last = d
			return d.ActiveClaims == int64(n), fmt.Sprintf("active_claims=%d", d.ActiveClaims), nil
		})
	name := fmt.Sprintf("the exporter served active_claims=%d", n)
	switch {
	case err != nil:
		r.rep.Fail(phase, name, err.Error())
	default:
		r.rep.Printf("exporter is serving: %s", last)
		r.rep.Pass(phase, name, fmt.Sprintf("%s, so the demand signal KEDA reads was there", last))
	}
}
