// Package plane is the state a local control plane's parts share once it is
// chosen (plane.go): its directory, tools, processes, ports, certificates and
// clients, with how they wait for the API server's objects (wait.go) and
// apply objects and CRDs to it (apply.go).
package plane

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// Plane is what starting, waiting for and stopping the control plane share:
// the state directory, the tools, the process record, the ports and
// certificates, what Options asked for and, once the API server answers, its
// clients. The Cluster is its public face; the node kinds and the add-ons
// use it.
type Plane struct {
	StateDir string
	Bins     *toolcache.Binaries
	Procs    *process.Set
	Progress io.Writer
	Ports    Ports
	PKI      *pki.PKI

	HPASyncPeriod     time.Duration
	SchedulerLogLevel int // Options.SchedulerLogLevel
	// RealNodes is Options.RealNodes: the API server then listens where pods
	// reach it, and the cluster DNS and KEDA's resolv.conf run.
	RealNodes            int
	Without              map[string]bool
	IsolatedRuntimeClass string
	WarmPoolCheck        bool // Options.SkipWarmPoolCheck unset

	APIServerURL, Kubeconfig string
	Config                   *rest.Config
	Client                   kubernetes.Interface
	Dynamic                  dynamic.Interface
}

// Ports are the loopback ports the processes serve on, chosen at start.
type Ports struct {
	EtcdClient, EtcdPeer, APIServer       int
	KWOK                                  int
	SandboxMetrics, SandboxHealth         int
	KEDAMetrics, KEDAHealth, KEDAGRPC     int
	AdapterSecure, AdapterMetrics         int
	KubeProxyHealth, KubeProxyMetrics     int
	CoreDNSHealth, CoreDNSReady           int
	KarpenterMetrics, KarpenterHealth     int
	ControllerManager, Scheduler, Profile int
}

// APIServerAddress is where the API server listens: loopback, or with real
// nodes the host's pod-network address, which pods reach through the
// kubernetes Service (loopback would be their own).
func (pl *Plane) APIServerAddress() string {
	if pl.RealNodes > 0 {
		return host.PodAddress
	}
	return "127.0.0.1"
}

// Connect makes the clients of the API server the admin kubeconfig names.
func (pl *Plane) Connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", pl.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", pl.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	pl.Config = cfg
	pl.APIServerURL = cfg.Host
	if pl.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	pl.Dynamic, err = dynamic.NewForConfig(cfg)
	return err
}

// Say tells the progress writer what the control plane does.
func (pl *Plane) Say(format string, args ...any) {
	fmt.Fprintf(pl.Progress, "localcluster: "+format+"\n", args...)
}

// Prepare chooses the ports, makes the certificates and writes the
// kubeconfigs (the admin's, the controller manager's and the scheduler's):
// what every process's spec names, so before any is made.
func (pl *Plane) Prepare() error {
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
	return nil
}

// AllocatePorts chooses a free port for each of Ports.
func (pl *Plane) AllocatePorts() error {
	targets := []*int{
		&pl.Ports.EtcdClient, &pl.Ports.EtcdPeer, &pl.Ports.APIServer, &pl.Ports.KWOK,
		&pl.Ports.SandboxMetrics, &pl.Ports.SandboxHealth, &pl.Ports.KEDAMetrics, &pl.Ports.KEDAHealth,
		&pl.Ports.KEDAGRPC, &pl.Ports.AdapterSecure, &pl.Ports.AdapterMetrics,
		&pl.Ports.ControllerManager, &pl.Ports.Scheduler, &pl.Ports.Profile,
		&pl.Ports.KubeProxyHealth, &pl.Ports.KubeProxyMetrics, &pl.Ports.CoreDNSHealth, &pl.Ports.CoreDNSReady,
		&pl.Ports.KarpenterMetrics, &pl.Ports.KarpenterHealth,
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
