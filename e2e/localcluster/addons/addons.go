// Package addons is the software a local control plane runs beside
// Kubernetes (addons.go): agent-sandbox's controller with the warm-pool proof
// of its readiness (warmpool.go), the cluster DNS, KEDA and its APIService
// (keda.go) and Karpenter with its node class and pool (karpenter.go): their
// CRDs, objects, processes and readiness.
package addons

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// An Addon is software the control plane runs beside Kubernetes: the CRDs and
// API objects it needs (applied with the bootstrap, before it starts), its
// processes as values (each built in its own file), and what it is ready by
// beyond its processes' own readiness.
type Addon struct {
	Name string // as Options.Without names it
	// crdTool is the tool whose run-time data holds the add-on's CRDs ("" for none).
	crdTool string
	objects func(p *pki.PKI) ([]map[string]any, error)
	// customResources are objects of the add-on's own CRDs, applied once
	// those are Established (Karpenter's node class and pool).
	customResources []map[string]any
	Processes       []procspec.Spec
	// readyAtStart: its processes are ready before the next add-on starts
	// (the cluster DNS, which KEDA and the nodes' pods resolve with);
	// otherwise they are waited for once the nodes run.
	readyAtStart bool
	ready        func(ctx context.Context) error
}

// List is the add-ons a cluster runs, in start order: agent-sandbox's
// controller, the cluster DNS (only for real nodes, whose pods resolve names),
// KEDA, and Karpenter (only with karpenter, Options.Karpenter with its
// defaults); Options.Without leaves out agent-sandbox's controller and KEDA.
// The ports must be chosen.
func List(pl *plane.Plane, karpenter *KarpenterOptions) []Addon {
	kedaSet := procspec.KEDASettings{
		OperatorBinary: pl.Bins.Path("keda-operator"), AdapterBinary: pl.Bins.Path("keda-adapter"),
		Kubeconfig: pl.Kubeconfig, CertDir: filepath.Join(pl.StateDir, "keda-certs"), PKI: pl.PKI,
		MetricsPort: pl.Ports.KEDAMetrics, HealthPort: pl.Ports.KEDAHealth, GRPCPort: pl.Ports.KEDAGRPC,
		AdapterSecurePort: pl.Ports.AdapterSecure, AdapterMetricsPort: pl.Ports.AdapterMetrics,
	}
	if pl.RealNodes > 0 {
		kedaSet.ResolvConf = filepath.Join(pl.StateDir, "coredns", "keda-resolv.conf")
	}
	all := []Addon{
		{
			Name: "agent-sandbox-controller", crdTool: "agent-sandbox",
			Processes: []procspec.Spec{procspec.AgentSandbox(procspec.AgentSandboxSettings{
				Binary: pl.Bins.Path("agent-sandbox-controller"), Kubeconfig: pl.Kubeconfig,
				MetricsPort: pl.Ports.SandboxMetrics, HealthPort: pl.Ports.SandboxHealth,
			})},
			ready: func(ctx context.Context) error {
				if !pl.WarmPoolCheck {
					return nil
				}
				return checkWarmPool(ctx, pl)
			},
		},
		{
			Name: "keda", crdTool: "keda", objects: func(p *pki.PKI) ([]map[string]any, error) { return kedaAPIObjects(pl, p) },
			Processes: []procspec.Spec{procspec.KEDAOperator(kedaSet), procspec.KEDAAdapter(kedaSet)},
			ready:     func(ctx context.Context) error { return kedaAPIServiceAvailable(ctx, pl) },
		},
	}
	if pl.RealNodes > 0 {
		dns := Addon{Name: "cluster DNS", readyAtStart: true, Processes: []procspec.Spec{procspec.ClusterDNS(procspec.ClusterDNSSettings{
			Binary: pl.Bins.Path("coredns"), Dir: filepath.Join(pl.StateDir, "coredns"), Kubeconfig: pl.Kubeconfig,
			HealthPort: pl.Ports.CoreDNSHealth, ReadyPort: pl.Ports.CoreDNSReady,
		})}}
		all = []Addon{all[0], dns, all[1]}
	}
	if k := karpenter; k != nil {
		all = append(all, Addon{
			Name: "karpenter", crdTool: "karpenter",
			Processes: []procspec.Spec{procspec.Karpenter(procspec.KarpenterSettings{
				Binary: pl.Bins.Path("karpenter"), Kubeconfig: pl.Kubeconfig,
				MetricsPort: pl.Ports.KarpenterMetrics, HealthPort: pl.Ports.KarpenterHealth,
				InstanceTypesFile: filepath.Join(pl.StateDir, "karpenter", "instance-types.json"), InstanceTypes: k.InstanceTypes,
				Debug: k.Debug,
			})},
			customResources: []map[string]any{
				karpenterNodeClass(KarpenterNodeClass, k.LaunchDelay),
				karpenterNodePool(KarpenterNodePool, KarpenterNodeClass, k.ConsolidateAfter),
			},
			ready: func(ctx context.Context) error { return karpenterNodePoolReady(ctx, pl) },
		})
	}
	var on []Addon
	for _, a := range all {
		if !pl.Without[a.Name] {
			on = append(on, a)
		}
	}
	return on
}

// Names are the add-ons' names, for saying what starts.
func Names(addons []Addon) string {
	names := make([]string, 0, len(addons))
	for _, a := range addons {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// Start starts the add-ons' processes in order, each of an add-on ready at
// start before the next.
func Start(ctx context.Context, pl *plane.Plane, addons []Addon) error {
	for _, name := range []string{"agent-sandbox-controller", "keda"} {
		if pl.Without[name] {
			pl.Say("not starting %s (Options.Without)", name)
		}
	}
	for _, a := range addons {
		for _, g := range a.Processes {
			proc, err := g.Start(pl.Procs)
			if err != nil {
				return err
			}
			if a.readyAtStart {
				if err := g.WaitReady(ctx, proc, pl.PKI); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Ready waits for each add-on's processes' readiness, then its own,
// in start order.
func Ready(ctx context.Context, pl *plane.Plane, addons []Addon) error {
	for _, a := range addons {
		if !a.readyAtStart {
			for _, g := range a.Processes {
				if err := g.WaitReady(ctx, pl.Procs.Get(g.Name), pl.PKI); err != nil {
					return fmt.Errorf("%s: %w", a.Name, err)
				}
			}
		}
		if a.ready == nil {
			continue
		}
		if err := a.ready(ctx); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	return nil
}

// CustomResources are the add-ons' objects of their own CRDs.
func CustomResources(addons []Addon) []map[string]any {
	var objs []map[string]any
	for _, a := range addons {
		objs = append(objs, a.customResources...)
	}
	return objs
}

// objectsAndCRDs are what the add-ons need applied before they start.
func objectsAndCRDs(pl *plane.Plane, addons []Addon) (objs []map[string]any, crdDirs []string, err error) {
	for _, a := range addons {
		if a.objects != nil {
			o, err := a.objects(pl.PKI)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", a.Name, err)
			}
			objs = append(objs, o...)
		}
		if a.crdTool != "" {
			crdDirs = append(crdDirs, filepath.Join(pl.Bins.DataDir(a.crdTool), "crds"))
		}
	}
	return objs, crdDirs, nil
}

// Bootstrap applies what the add-ons and the nodes (nodeObjects) need before
// they start, waits for the CRDs to be Established, then applies the
// add-ons' objects of those CRDs.
func Bootstrap(ctx context.Context, pl *plane.Plane, addonList []Addon, nodeObjects []map[string]any) error {
	addonObjs, crdDirs, err := objectsAndCRDs(pl, addonList)
	if err != nil {
		return err
	}
	for _, o := range slices.Concat(nodeObjects, addonObjs) {
		if err := pl.Apply(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	var crdNames []string
	for _, dir := range crdDirs {
		names, err := pl.ApplyCRDs(ctx, dir)
		if err != nil {
			return err
		}
		crdNames = append(crdNames, names...)
	}
	if err := pl.WaitCRDsEstablished(ctx, crdNames); err != nil {
		return err
	}
	for _, o := range CustomResources(addonList) {
		if err := pl.Apply(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	return nil
}
