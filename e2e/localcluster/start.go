package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/nodes"
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
// pods need the add-ons' CRDs and DNS), then the whole chain's readiness. The
// ports and certificates must be chosen and made (plane.Prepare): the
// processes' specs name them.
func (c *Cluster) startSteps(pl *plane.Plane, kinds []nodes.Kind) []startStep {
	settings := kubernetesSettings(pl)
	kubernetes := procspec.Kubernetes(settings)
	addonList := addons.List(pl, c.karpenter)
	return []startStep{
		{"the host for the nodes", func(ctx context.Context) error {
			for _, k := range kinds {
				if err := k.Prepare(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{procspec.Names(kubernetes), func(ctx context.Context) error {
			if err := procspec.RunAll(ctx, pl.Procs, pl.PKI, kubernetes); err != nil {
				return err
			}
			return pl.Connect()
		}},
		{"the nodes' objects, runtime classes, CRDs and KEDA's APIService", func(ctx context.Context) error {
			return addons.Bootstrap(ctx, pl, addonList, nodes.Objects(kinds, pl.IsolatedRuntimeClass))
		}},
		{"the add-ons (" + addons.Names(addonList) + ")", func(ctx context.Context) error {
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
			if err := pl.WaitFor(ctx, "the nodes to be Ready", 90*time.Second, pl.NodesReady()); err != nil {
				return err
			}
			return addons.Ready(ctx, pl, addonList)
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
		Scheduler: procspec.SchedulerSettings{Binary: pl.Bins.Path("kube-scheduler"), Kubeconfig: filepath.Join(pl.StateDir, "scheduler.kubeconfig"), Port: pl.Ports.Scheduler,
			LogLevel: pl.SchedulerLogLevel},
	}
}

// start makes the plane's ports, certificates and kubeconfigs, then runs the
// start steps.
func (c *Cluster) start(ctx context.Context) error {
	pl := c.plane
	began := time.Now()
	if err := pl.Prepare(); err != nil {
		return err
	}
	for _, s := range c.startSteps(pl, c.kinds) {
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
