// Package localcluster runs a local control plane: real etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, the agent-sandbox controller (with
// extensions), the KEDA operator and metrics adapter, all built from the Go
// module proxy at pinned versions, with KWOK standing in for the kubelet (the
// one simulated part: pods are scheduled and reported Running and Ready, but no
// container runs, so exec and logs are not available).
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/freeport"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/process"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/toolcache"
)

// SkipEnv, when set to 1, makes the tests that start a control plane skip,
// saying so. They are never skipped otherwise: a missing tool is built.
const SkipEnv = "LOCALCLUSTER_SKIP"

// Options configure a local control plane.
type Options struct {
	// StateDir holds certificates, kubeconfigs, etcd data and every process's
	// log. Empty: a new temporary directory, removed by Stop.
	StateDir string
	// Nodes is the number of simulated (KWOK) nodes; default 1, or 0 with
	// real nodes.
	Nodes int
	// RealNodes is the number of real nodes (realnode.go): a kubelet with
	// containerd, runc and gVisor each, pods that really run. Needs root; the
	// Debian packages they use are installed when missing. Default 0.
	RealNodes int
	// HPASyncPeriod is kube-controller-manager's
	// --horizontal-pod-autoscaler-sync-period; default 15s, as on EKS.
	HPASyncPeriod time.Duration
	// IsolatedRuntimeClass names a RuntimeClass for isolated pods: gVisor
	// (handler runsc) on real nodes; with simulated nodes only, a class that
	// schedules onto them and runs nothing. Empty: no such class. The
	// product's name for it is the caller's (framework.StartCluster).
	IsolatedRuntimeClass string
	// SkipWarmPoolCheck skips the start-up proof that a SandboxWarmPool of 1
	// becomes Ready (it costs a few seconds).
	SkipWarmPoolCheck bool
	// Progress receives what the control plane is doing and waiting for;
	// default os.Stderr.
	Progress io.Writer
	// KwokStages, when set, is given the default KWOK stages (a multi-document
	// YAML stream) and returns the stages KWOK runs with: the hook for a
	// simulation that needs, say, a boot delay on some pods.
	KwokStages func(defaults []byte) ([]byte, error)
	// Without names components not to start: "agent-sandbox-controller"
	// (its CRDs stay, so claims are inert objects: for load tests of the API
	// server), "keda" (operator and adapter, and then neither its CRDs nor
	// its APIService, and its tool is not built).
	Without []string
	// OutliveCaller keeps the control plane's processes running when the
	// program that started it exits (`localcluster up`, the demo; `localcluster
	// down` stops them). Otherwise they get SIGKILL when it dies, however it
	// dies, so a killed test leaves no control plane behind.
	OutliveCaller bool
}

// Cluster is a running local control plane.
type Cluster struct {
	StateDir string
	// Kubeconfig is the path of an admin kubeconfig (system:masters, client
	// certificate embedded), context "localcluster".
	Kubeconfig string
	// APIServerURL is https://127.0.0.1:<port>; CAFile verifies it.
	APIServerURL string
	CAFile       string
	// HPASyncPeriod is the HPA controller's sync period in use.
	HPASyncPeriod time.Duration
	Binaries      *toolcache.Binaries

	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface

	procs *process.Set
	// isolatedRuntimeClass is Options.IsolatedRuntimeClass.
	isolatedRuntimeClass string
	outliveCaller        bool
	without              map[string]bool
	realNodes            int
	kinds                []nodeKind
	warmPoolCheck        bool // Options.SkipWarmPoolCheck unset
	ledger               *hostLedger
	// nodeProgramDir holds the node's own programs (its CNI plugin).
	nodeProgramDir string
	ports          ports
	removeState    bool
	progress       io.Writer
	kwokStages     func([]byte) ([]byte, error)
}

type ports struct {
	etcdClient, etcdPeer, apiserver       int
	kwok                                  int
	sandboxMetrics, sandboxHealth         int
	kedaMetrics, kedaHealth, kedaGRPC     int
	adapterSecure, adapterMetrics         int
	kubeProxyHealth, kubeProxyMetrics     int
	corednsHealth, corednsReady           int
	controllerManager, scheduler, profile int
}

// Start builds what is missing, then starts every component and waits until
// the whole chain is ready: /readyz, the simulated nodes Ready, KEDA's
// APIService Available, the agent-sandbox controller healthy and (unless
// skipped) a warm pool of 1 Ready. On failure it stops what it started.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if opts.RealNodes < 0 || opts.RealNodes > maxRealNodes {
		return nil, fmt.Errorf("RealNodes is %d: want 0..%d", opts.RealNodes, maxRealNodes)
	}
	if opts.Nodes < 0 || opts.Nodes > maxKWOKNodes {
		return nil, fmt.Errorf("Nodes is %d: want 0..%d (each simulated node gets a /24 of %s)", opts.Nodes, maxKWOKNodes, kwokPodCIDR)
	}
	if opts.Nodes == 0 && opts.RealNodes == 0 {
		opts.Nodes = 1
	}
	if opts.HPASyncPeriod <= 0 {
		opts.HPASyncPeriod = 15 * time.Second
	}
	bins, err := toolcache.Ensure(ctx, opts.Progress, neededTools(opts)...)
	if err != nil {
		return nil, err
	}
	c := &Cluster{StateDir: opts.StateDir, Binaries: bins, HPASyncPeriod: opts.HPASyncPeriod, progress: opts.Progress, without: map[string]bool{}, realNodes: opts.RealNodes, kwokStages: opts.KwokStages, outliveCaller: opts.OutliveCaller, isolatedRuntimeClass: opts.IsolatedRuntimeClass}
	for _, w := range opts.Without {
		if w != "agent-sandbox-controller" && w != "keda" {
			return nil, fmt.Errorf("unknown component %q in Without (known: agent-sandbox-controller, keda)", w)
		}
		c.without[w] = true
	}
	c.kinds = c.nodeKinds(opts.Nodes, opts.RealNodes)
	c.warmPoolCheck = !opts.SkipWarmPoolCheck
	if c.StateDir == "" {
		if c.StateDir, err = os.MkdirTemp("", "localcluster-"); err != nil {
			return nil, err
		}
		c.removeState = true
	} else {
		if process.RecordedIn(c.StateDir) {
			if procs, _ := process.Load(c.StateDir); procs != nil && procs.AnyAlive() {
				return nil, fmt.Errorf("a local control plane is already running in %s: stop it first (localcluster down --state %s)", c.StateDir, c.StateDir)
			}
		}
		if err := os.RemoveAll(c.StateDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
			return nil, err
		}
	}
	if c.StateDir, err = filepath.Abs(c.StateDir); err != nil {
		return nil, err
	}
	c.procs = process.NewSet(c.StateDir, c.outliveCaller)
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n(logs of every process are in %s)", err, filepath.Join(c.StateDir, "logs"))
			_ = c.teardown()
		}
	}()
	began := time.Now()
	if err := c.allocatePorts(); err != nil {
		return nil, err
	}
	p := &pki{dir: filepath.Join(c.StateDir, "pki")}
	if err := p.generate(); err != nil {
		return nil, fmt.Errorf("making certificates: %w", err)
	}
	c.CAFile = p.path(clusterCA + ".crt")
	c.APIServerURL = "https://" + c.apiServerAddress() + ":" + strconv.Itoa(c.ports.apiserver)

	steps := []struct {
		what string
		run  func(context.Context, *pki) error
	}{
		{"the host for the nodes", c.prepareNodes},
		{"etcd and kube-apiserver", c.startAPIServer},
		{"kube-controller-manager and kube-scheduler", c.startControllers},
		{"the nodes' objects, runtime classes, CRDs and KEDA's APIService", c.bootstrap},
		{"agent-sandbox and KEDA", c.startAddons},
		{"the nodes (KWOK, kubelets)", c.startNodes},
		{"the whole chain to be ready", func(ctx context.Context, _ *pki) error { return c.waitReady(ctx) }},
	}
	for _, s := range steps {
		c.say("starting %s", s.what)
		if err := s.run(ctx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.StateDir, "env"), []byte("KUBECONFIG="+c.Kubeconfig+"\n"), 0o644); err != nil {
		return nil, err
	}
	c.say("local control plane ready in %s (state %s)", time.Since(began).Round(100*time.Millisecond), c.StateDir)
	return c, nil
}

// Attach returns a handle on a control plane another process started in
// stateDir (for `localcluster down` and `env`).
func Attach(stateDir string) (*Cluster, error) {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, err
	}
	procs, err := process.Load(abs)
	if err != nil {
		return nil, fmt.Errorf("no local control plane in %s: %w", abs, err)
	}
	c := &Cluster{StateDir: abs, procs: procs, Kubeconfig: filepath.Join(abs, "kubeconfig"), progress: os.Stderr, realNodes: countRealNodes(abs)}
	c.kinds = c.nodeKinds(0, c.realNodes)
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

// Stop kills exactly the processes this control plane started and, for a
// temporary state directory, removes it.
func (c *Cluster) Stop() error {
	errs := c.teardown()
	if errs == nil && c.removeState {
		return os.RemoveAll(c.StateDir)
	}
	return errs
}

// teardown stops the processes and undoes what real nodes did to the machine.
func (c *Cluster) teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.stopNodes(ctx)
	cancel()
	errs := c.procs.Stop(10 * time.Second)
	if len(errs) == 0 {
		errs = c.cleanNodes()
	}
	if len(errs) == 0 {
		if err := c.procs.RemoveRecord(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveState deletes the state directory of a stopped control plane.
func (c *Cluster) RemoveState() error {
	if ok, _ := c.Running(); ok && len(c.procs.All()) > 0 {
		return errors.New("the control plane is still running")
	}
	return os.RemoveAll(c.StateDir)
}

// Log returns the path of a component's log (e.g. "kube-apiserver").
func (c *Cluster) Log(name string) string { return process.LogPath(c.StateDir, name) }

// KEDAOperatorMetricsURL is where KEDA's operator serves its Prometheus metrics
// (keda_scaler_detail_errors_total among them), as its metrics Service does in a cluster.
func (c *Cluster) KEDAOperatorMetricsURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(c.ports.kedaMetrics) + "/metrics"
}

func (c *Cluster) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c.Config = cfg
	c.APIServerURL = cfg.Host
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	c.Dynamic, err = dynamic.NewForConfig(cfg)
	return err
}

func (c *Cluster) say(format string, args ...any) {
	fmt.Fprintf(c.progress, "localcluster: "+format+"\n", args...)
}

func (c *Cluster) allocatePorts() error {
	targets := []*int{
		&c.ports.etcdClient, &c.ports.etcdPeer, &c.ports.apiserver, &c.ports.kwok,
		&c.ports.sandboxMetrics, &c.ports.sandboxHealth, &c.ports.kedaMetrics, &c.ports.kedaHealth,
		&c.ports.kedaGRPC, &c.ports.adapterSecure, &c.ports.adapterMetrics,
		&c.ports.controllerManager, &c.ports.scheduler, &c.ports.profile,
		&c.ports.kubeProxyHealth, &c.ports.kubeProxyMetrics, &c.ports.corednsHealth, &c.ports.corednsReady,
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
