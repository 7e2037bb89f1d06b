package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/nodes"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// startStep is one step of Start, in order.
type startStep struct {
	what string
	run  func(context.Context) error
}

// startSteps is the start order: the host for the nodes before the API server
// (which listens on the nodes' network), Kubernetes' own processes, the
// objects and CRDs the add-ons and nodes need, the add-ons, the nodes (whose
// pods need the add-ons' CRDs and DNS), then the whole chain's readiness.
func (c *Cluster) startSteps() []startStep {
	pl, kinds, addonList := c.plane, c.kinds, c.addons()
	kubernetes := procspec.Kubernetes(kubernetesSettings(pl))
	return []startStep{
		{"the host for the nodes", func(ctx context.Context) error {
			for _, k := range kinds {
				if err := k.Prepare(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{joinedNames(kubernetes, func(g procspec.Spec) string { return g.Name }), func(ctx context.Context) error {
			if err := procspec.RunAll(ctx, pl.Procs, pl.PKI, kubernetes); err != nil {
				return err
			}
			return pl.Connect()
		}},
		{"the nodes' objects, runtime classes, CRDs and KEDA's APIService", func(ctx context.Context) error {
			return c.bootstrap(ctx, addonList)
		}},
		{"the add-ons (" + joinedNames(addonList, func(a addons.Addon) string { return a.Name }) + ")", func(ctx context.Context) error {
			// Built again now that the nodes are prepared: a real node's tools,
			// CoreDNS among them, are built then, and a process takes its
			// binary's path when it is built.
			addonList = c.addons()
			return addons.Start(ctx, pl, addonList)
		}},
		{"the nodes (KWOK, kubelets)", func(ctx context.Context) error {
			for _, k := range kinds {
				if err := k.Start(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{"the whole chain to be ready", func(ctx context.Context) error {
			return waitReady(ctx, pl, addonList)
		}},
	}
}

// kubernetesSettings are the settings of Kubernetes' own processes.
func kubernetesSettings(pl *plane.Plane) procspec.KubernetesSettings {
	etcd := procspec.EtcdSettings{Binary: pl.Bins.Path("etcd"), DataDir: filepath.Join(pl.StateDir, "etcd"), ClientPort: pl.Ports.EtcdClient, PeerPort: pl.Ports.EtcdPeer}
	return procspec.KubernetesSettings{
		Etcd: etcd,
		APIServer: procspec.APIServerSettings{Binary: pl.Bins.Path("kube-apiserver"), EtcdURL: etcd.ClientURL(), Address: pl.APIServerAddress(),
			Port: pl.Ports.APIServer, PKI: pl.PKI, WithKubelets: pl.RealNodes > 0},
		ControllerManager: procspec.ControllerManagerSettings{Binary: pl.Bins.Path("kube-controller-manager"), Kubeconfig: filepath.Join(pl.StateDir, "controller-manager.kubeconfig"),
			Port: pl.Ports.ControllerManager, PKI: pl.PKI, HPASyncPeriod: pl.HPASyncPeriod},
		Scheduler: procspec.SchedulerSettings{Binary: pl.Bins.Path("kube-scheduler"), Kubeconfig: filepath.Join(pl.StateDir, "scheduler.kubeconfig"), Port: pl.Ports.Scheduler},
	}
}

// start chooses the ports, makes the certificates and the kubeconfigs, then
// runs the start steps.
func (c *Cluster) start(ctx context.Context) error {
	pl := c.plane
	began := time.Now()
	if err := pl.AllocatePorts(); err != nil {
		return err
	}
	pl.PKI = pki.New(filepath.Join(pl.StateDir, "pki"))
	if err := pl.PKI.Generate(); err != nil {
		return fmt.Errorf("making certificates: %w", err)
	}
	pl.APIServerURL = "https://" + pl.APIServerAddress() + ":" + strconv.Itoa(pl.Ports.APIServer)
	for _, k := range []struct{ file, user string }{{"kubeconfig", "admin"}, {"controller-manager.kubeconfig", "controller-manager"}, {"scheduler.kubeconfig", "scheduler"}} {
		if err := pki.WriteKubeconfig(pl.PKI, pl.APIServerURL, filepath.Join(pl.StateDir, k.file), k.user); err != nil {
			return err
		}
	}
	pl.Kubeconfig = filepath.Join(pl.StateDir, "kubeconfig")
	for _, s := range c.startSteps() {
		pl.Say("starting %s", s.what)
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	if err := os.WriteFile(filepath.Join(pl.StateDir, "env"), []byte("KUBECONFIG="+pl.Kubeconfig+"\n"), 0o644); err != nil {
		return err
	}
	pl.Say("local control plane ready in %s (state %s)", time.Since(began).Round(100*time.Millisecond), pl.StateDir)
	return nil
}

// joinedNames joins the names of xs (processes, add-ons), for saying what starts.
func joinedNames[T any](xs []T, name func(T) string) string {
	names := make([]string, 0, len(xs))
	for _, x := range xs {
		names = append(names, name(x))
	}
	return strings.Join(names, ", ")
}

// waitReady waits for the nodes, then each add-on's own readiness.
func waitReady(ctx context.Context, pl *plane.Plane, addonList []addons.Addon) error {
	if err := pl.WaitFor(ctx, "the nodes to be Ready", 90*time.Second, pl.NodesReady()); err != nil {
		return err
	}
	return addons.Ready(ctx, pl, addonList)
}

// addons are the add-ons this cluster runs, in start order (the ports must
// be chosen).
func (c *Cluster) addons() []addons.Addon { return addons.List(c.plane, c.karpenter) }

// bootstrap applies what the nodes and the add-ons need before they start,
// waits for the CRDs to be Established, then applies the add-ons' objects of
// those CRDs.
func (c *Cluster) bootstrap(ctx context.Context, addonList []addons.Addon) error {
	pl := c.plane
	addonObjs, crdDirs, err := addons.ObjectsAndCRDs(pl, addonList)
	if err != nil {
		return err
	}
	objs := append(nodes.Objects(c.kinds, pl.IsolatedRuntimeClass), addonObjs...)
	for _, o := range objs {
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
	for _, o := range addons.CustomResources(addonList) {
		if err := pl.Apply(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	return nil
}
