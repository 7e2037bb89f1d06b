package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// plane is what starting, waiting for and stopping the control plane share:
// the state directory, the tools, the process record, the ports and
// certificates, what Options asked for and, once the API server answers, its
// clients. The Cluster is its public face; the node kinds and the add-ons
// use it.
type plane struct {
	stateDir string
	bins     *toolcache.Binaries
	procs    *process.Set
	progress io.Writer
	ports    ports
	pki      *pki.PKI

	hpaSyncPeriod time.Duration
	// realNodes is Options.RealNodes: the API server then listens where pods
	// reach it, and the cluster DNS and KEDA's resolv.conf run.
	realNodes            int
	without              map[string]bool
	isolatedRuntimeClass string
	warmPoolCheck        bool // Options.SkipWarmPoolCheck unset
	// karpenter is Options.Karpenter with its defaults; nil: no Karpenter.
	karpenter *KarpenterOptions

	apiServerURL, kubeconfig string
	config                   *rest.Config
	client                   kubernetes.Interface
	dynamic                  dynamic.Interface
}

type ports struct {
	etcdClient, etcdPeer, apiserver       int
	kwok                                  int
	sandboxMetrics, sandboxHealth         int
	kedaMetrics, kedaHealth, kedaGRPC     int
	adapterSecure, adapterMetrics         int
	kubeProxyHealth, kubeProxyMetrics     int
	corednsHealth, corednsReady           int
	karpenterMetrics, karpenterHealth     int
	controllerManager, scheduler, profile int
}

// startStep is one step of Start, in order.
type startStep struct {
	what string
	run  func(context.Context) error
}

// startSteps is the start order: the host for the nodes before the API server
// (which listens on the nodes' network), Kubernetes' own processes, the
// objects and CRDs the add-ons and nodes need, the add-ons, the nodes (whose
// pods need the add-ons' CRDs and DNS), then the whole chain's readiness.
func (pl *plane) startSteps(kinds []nodeKind) []startStep {
	kubernetes := procspec.Kubernetes(pl.kubernetesSettings())
	return []startStep{
		{"the host for the nodes", func(ctx context.Context) error {
			for _, k := range kinds {
				if err := k.prepare(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{joinedNames(kubernetes, func(g procspec.Spec) string { return g.Name }), func(ctx context.Context) error {
			if err := procspec.RunAll(ctx, pl.procs, pl.pki, kubernetes); err != nil {
				return err
			}
			return pl.connect()
		}},
		{"the nodes' objects, runtime classes, CRDs and KEDA's APIService", func(ctx context.Context) error {
			return pl.bootstrap(ctx, kinds)
		}},
		{"the add-ons (" + joinedNames(pl.addons(), func(a addon) string { return a.name }) + ")", pl.startAddons},
		{"the nodes (KWOK, kubelets)", func(ctx context.Context) error {
			for _, k := range kinds {
				if err := k.start(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{"the whole chain to be ready", pl.waitReady},
	}
}

// kubernetesSettings are the settings of Kubernetes' own processes.
func (pl *plane) kubernetesSettings() procspec.KubernetesSettings {
	etcd := procspec.EtcdSettings{Binary: pl.bins.Path("etcd"), DataDir: filepath.Join(pl.stateDir, "etcd"), ClientPort: pl.ports.etcdClient, PeerPort: pl.ports.etcdPeer}
	return procspec.KubernetesSettings{
		Etcd: etcd,
		APIServer: procspec.APIServerSettings{Binary: pl.bins.Path("kube-apiserver"), EtcdURL: etcd.ClientURL(), Address: pl.apiServerAddress(),
			Port: pl.ports.apiserver, PKI: pl.pki, WithKubelets: pl.realNodes > 0},
		ControllerManager: procspec.ControllerManagerSettings{Binary: pl.bins.Path("kube-controller-manager"), Kubeconfig: filepath.Join(pl.stateDir, "controller-manager.kubeconfig"),
			Port: pl.ports.controllerManager, PKI: pl.pki, HPASyncPeriod: pl.hpaSyncPeriod},
		Scheduler: procspec.SchedulerSettings{Binary: pl.bins.Path("kube-scheduler"), Kubeconfig: filepath.Join(pl.stateDir, "scheduler.kubeconfig"), Port: pl.ports.scheduler},
	}
}

// start chooses the ports, makes the certificates and the kubeconfigs, then
// runs the start steps.
func (pl *plane) start(ctx context.Context, kinds []nodeKind) error {
	began := time.Now()
	if err := pl.allocatePorts(); err != nil {
		return err
	}
	pl.pki = pki.New(filepath.Join(pl.stateDir, "pki"))
	if err := pl.pki.Generate(); err != nil {
		return fmt.Errorf("making certificates: %w", err)
	}
	pl.apiServerURL = "https://" + pl.apiServerAddress() + ":" + strconv.Itoa(pl.ports.apiserver)
	for _, k := range []struct{ file, user string }{{"kubeconfig", "admin"}, {"controller-manager.kubeconfig", "controller-manager"}, {"scheduler.kubeconfig", "scheduler"}} {
		if err := pki.WriteKubeconfig(pl.pki, pl.apiServerURL, filepath.Join(pl.stateDir, k.file), k.user); err != nil {
			return err
		}
	}
	pl.kubeconfig = filepath.Join(pl.stateDir, "kubeconfig")
	for _, s := range pl.startSteps(kinds) {
		pl.say("starting %s", s.what)
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	if err := os.WriteFile(filepath.Join(pl.stateDir, "env"), []byte("KUBECONFIG="+pl.kubeconfig+"\n"), 0o644); err != nil {
		return err
	}
	pl.say("local control plane ready in %s (state %s)", time.Since(began).Round(100*time.Millisecond), pl.stateDir)
	return nil
}

// apiServerAddress is where the API server listens: loopback, or with real
// nodes the host's pod-network address, which pods reach through the
// kubernetes Service (loopback would be their own).
func (pl *plane) apiServerAddress() string {
	if pl.realNodes > 0 {
		return host.PodAddress
	}
	return "127.0.0.1"
}

func (pl *plane) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", pl.kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", pl.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	pl.config = cfg
	pl.apiServerURL = cfg.Host
	if pl.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	pl.dynamic, err = dynamic.NewForConfig(cfg)
	return err
}

func (pl *plane) say(format string, args ...any) {
	fmt.Fprintf(pl.progress, "localcluster: "+format+"\n", args...)
}

func (pl *plane) allocatePorts() error {
	targets := []*int{
		&pl.ports.etcdClient, &pl.ports.etcdPeer, &pl.ports.apiserver, &pl.ports.kwok,
		&pl.ports.sandboxMetrics, &pl.ports.sandboxHealth, &pl.ports.kedaMetrics, &pl.ports.kedaHealth,
		&pl.ports.kedaGRPC, &pl.ports.adapterSecure, &pl.ports.adapterMetrics,
		&pl.ports.controllerManager, &pl.ports.scheduler, &pl.ports.profile,
		&pl.ports.kubeProxyHealth, &pl.ports.kubeProxyMetrics, &pl.ports.corednsHealth, &pl.ports.corednsReady,
		&pl.ports.karpenterMetrics, &pl.ports.karpenterHealth,
	}
	ports, err := freeport.Ports(len(targets))
	if err != nil {
		return fmt.Errorf("choosing free ports: %w", err)
	}
	for i, t := range targets {
		*t = ports[i]
	}
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
