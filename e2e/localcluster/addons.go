package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// addon is software the control plane runs beside Kubernetes: the CRDs and
// API objects it needs (applied with the bootstrap, before it starts), its
// processes as values (each built in its own file), and what it is ready by
// beyond its processes' own readiness.
type addon struct {
	name string // as Options.Without names it
	// crdTool is the tool whose run-time data holds the add-on's CRDs ("" for none).
	crdTool string
	objects func(p *pki.PKI) ([]map[string]any, error)
	// customResources are objects of the add-on's own CRDs, applied once
	// those are Established (Karpenter's node class and pool).
	customResources []map[string]any
	processes       []procspec.Spec
	// readyAtStart: its processes are ready before the next add-on starts
	// (the cluster DNS, which KEDA and the nodes' pods resolve with);
	// otherwise they are waited for once the nodes run.
	readyAtStart bool
	ready        func(ctx context.Context) error
}

// addons are the add-ons this cluster runs, in start order: agent-sandbox's
// controller, the cluster DNS (only for real nodes, whose pods resolve names),
// KEDA, and Karpenter (only with Options.Karpenter); Options.Without leaves
// out agent-sandbox's controller and KEDA. The ports must be chosen.
func (pl *plane) addons() []addon {
	kedaSet := procspec.KEDASettings{
		OperatorBinary: pl.bins.Path("keda-operator"), AdapterBinary: pl.bins.Path("keda-adapter"),
		Kubeconfig: pl.kubeconfig, CertDir: filepath.Join(pl.stateDir, "keda-certs"), PKI: pl.pki,
		MetricsPort: pl.ports.kedaMetrics, HealthPort: pl.ports.kedaHealth, GRPCPort: pl.ports.kedaGRPC,
		AdapterSecurePort: pl.ports.adapterSecure, AdapterMetricsPort: pl.ports.adapterMetrics,
	}
	if pl.realNodes > 0 {
		kedaSet.ResolvConf = filepath.Join(pl.stateDir, "coredns", "keda-resolv.conf")
	}
	all := []addon{
		{
			name: "agent-sandbox-controller", crdTool: "agent-sandbox",
			processes: []procspec.Spec{procspec.AgentSandbox(procspec.AgentSandboxSettings{
				Binary: pl.bins.Path("agent-sandbox-controller"), Kubeconfig: pl.kubeconfig,
				MetricsPort: pl.ports.sandboxMetrics, HealthPort: pl.ports.sandboxHealth,
			})},
			ready: func(ctx context.Context) error {
				if !pl.warmPoolCheck {
					return nil
				}
				return pl.checkWarmPool(ctx)
			},
		},
		{
			name: "keda", crdTool: "keda", objects: pl.kedaAPIObjects,
			processes: []procspec.Spec{procspec.KEDAOperator(kedaSet), procspec.KEDAAdapter(kedaSet)},
			ready:     pl.kedaAPIServiceAvailable,
		},
	}
	if pl.realNodes > 0 {
		dns := addon{name: "cluster DNS", readyAtStart: true, processes: []procspec.Spec{procspec.ClusterDNS(procspec.ClusterDNSSettings{
			Binary: pl.bins.Path("coredns"), Dir: filepath.Join(pl.stateDir, "coredns"), Kubeconfig: pl.kubeconfig,
			HealthPort: pl.ports.corednsHealth, ReadyPort: pl.ports.corednsReady,
		})}}
		all = []addon{all[0], dns, all[1]}
	}
	if k := pl.karpenter; k != nil {
		all = append(all, addon{
			name: "karpenter", crdTool: "karpenter",
			processes: []procspec.Spec{procspec.Karpenter(procspec.KarpenterSettings{
				Binary: pl.bins.Path("karpenter"), Kubeconfig: pl.kubeconfig,
				MetricsPort: pl.ports.karpenterMetrics, HealthPort: pl.ports.karpenterHealth,
				InstanceTypesFile: filepath.Join(pl.stateDir, "karpenter", "instance-types.json"), InstanceTypes: k.InstanceTypes,
			})},
			customResources: []map[string]any{
				karpenterNodeClass(KarpenterNodeClass, k.LaunchDelay),
				karpenterNodePool(KarpenterNodePool, KarpenterNodeClass, k.ConsolidateAfter),
			},
			ready: pl.karpenterNodePoolReady,
		})
	}
	var on []addon
	for _, a := range all {
		if !pl.without[a.name] {
			on = append(on, a)
		}
	}
	return on
}

func (pl *plane) startAddons(ctx context.Context) error {
	for _, name := range []string{"agent-sandbox-controller", "keda"} {
		if pl.without[name] {
			pl.say("not starting %s (Options.Without)", name)
		}
	}
	for _, a := range pl.addons() {
		for _, g := range a.processes {
			proc, err := g.Start(pl.procs)
			if err != nil {
				return err
			}
			if a.readyAtStart {
				if err := g.WaitReady(ctx, proc, pl.pki); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// addonsReady waits for each add-on's processes' readiness, then its own,
// in start order.
func (pl *plane) addonsReady(ctx context.Context) error {
	for _, a := range pl.addons() {
		if !a.readyAtStart {
			for _, g := range a.processes {
				if err := g.WaitReady(ctx, pl.procs.Get(g.Name), pl.pki); err != nil {
					return fmt.Errorf("%s: %w", a.name, err)
				}
			}
		}
		if a.ready == nil {
			continue
		}
		if err := a.ready(ctx); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return nil
}

// kedaAPIServiceAvailable waits for the aggregator to call KEDA's metrics
// adapter Available.
func (pl *plane) kedaAPIServiceAvailable(ctx context.Context) error {
	return pl.waitFor(ctx, "APIService v1beta1.external.metrics.k8s.io (KEDA's metrics adapter) to be Available", 90*time.Second, func(ctx context.Context) (bool, error) {
		if p := pl.procs.Get("keda-adapter"); p != nil && p.Exited() {
			return false, poll.Stop(fmt.Errorf("it exits 0 on start-up errors: %w", p.ExitedError()))
		}
		a, err := pl.dynamic.Resource(APIServiceGVR).Get(ctx, "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !ConditionTrue(a, "Available") {
			return false, fmt.Errorf("APIService not Available: %v", a.Object["status"])
		}
		return true, nil
	})
}

// karpenterNodePoolReady waits for Karpenter to call its node pool Ready:
// the node class Ready (its CRD's default status), the pool validated.
func (pl *plane) karpenterNodePoolReady(ctx context.Context) error {
	return pl.waitFor(ctx, "NodePool "+KarpenterNodePool+" to be Ready (Karpenter)", 60*time.Second, func(ctx context.Context) (bool, error) {
		if p := pl.procs.Get("karpenter"); p != nil && p.Exited() {
			return false, poll.Stop(p.ExitedError())
		}
		np, err := pl.dynamic.Resource(NodePoolGVR).Get(ctx, KarpenterNodePool, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !ConditionTrue(np, "Ready") {
			return false, fmt.Errorf("NodePool not Ready: %v", np.Object["status"])
		}
		return true, nil
	})
}

// addonCustomResources are the add-ons' objects of their own CRDs.
func (pl *plane) addonCustomResources() []map[string]any {
	var objs []map[string]any
	for _, a := range pl.addons() {
		objs = append(objs, a.customResources...)
	}
	return objs
}

// addonObjectsAndCRDs are what the add-ons need applied before they start.
func (pl *plane) addonObjectsAndCRDs() (objs []map[string]any, crdDirs []string, err error) {
	for _, a := range pl.addons() {
		if a.objects != nil {
			o, err := a.objects(pl.pki)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", a.name, err)
			}
			objs = append(objs, o...)
		}
		if a.crdTool != "" {
			crdDirs = append(crdDirs, filepath.Join(pl.bins.DataDir(a.crdTool), "crds"))
		}
	}
	return objs, crdDirs, nil
}
