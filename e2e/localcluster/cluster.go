// Package localcluster runs a local control plane: real etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, the agent-sandbox controller (with
// extensions), the KEDA operator and metrics adapter, all built from the Go
// module proxy at pinned versions, with simulated nodes, whose kubelets KWOK
// plays (pods are scheduled and reported Running and Ready, but no container
// runs, so exec and logs are not available), and, as root, real nodes (a
// kubelet with its containerd, runc and gVisor; nodes/real.go) beside them or
// instead. Every process is a value (procspec/spec.go) built by its own file.
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

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/livetests"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/nodes"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
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
	// RealNodes is the number of real nodes (nodes/real.go): a kubelet with
	// containerd, runc and gVisor each, pods that really run. Needs root; the
	// Debian packages they use are installed when missing. Default 0.
	RealNodes int
	// HPASyncPeriod is kube-controller-manager's
	// --horizontal-pod-autoscaler-sync-period; default 15s, as on EKS.
	HPASyncPeriod time.Duration
	// SchedulerLogLevel is kube-scheduler's --v; default 1. At 5 its log has each pod's every
	// scheduling attempt and every move between its queues (which pod a freed slot goes to).
	SchedulerLogLevel int
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
	// Karpenter, when set, runs Karpenter with its KWOK cloud provider
	// (addons/karpenter.go) and applies its KWOKNodeClass and NodePool: a pod that
	// no node fits makes it launch a simulated node, which KWOK runs beside
	// the Nodes. Needs simulated nodes (KWOK runs with them).
	Karpenter *KarpenterOptions
	// OutliveCaller keeps the control plane's processes running when the
	// program that started it exits (`localcluster up`, the demo; `localcluster
	// down` stops them). Otherwise they get SIGKILL when it dies, however it
	// dies, so a killed test leaves no control plane behind.
	OutliveCaller bool
}

// Cluster is a running local control plane: what its users read (the fields)
// and do (the methods). What its parts share is the plane (plane/plane.go);
// the order they start in is start.go's.
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

	plane *plane.Plane
	// kinds are the kinds of node, in start order (nodes/kind.go).
	kinds []nodes.Kind
	// karpenter is Options.Karpenter with its defaults; nil: no Karpenter.
	karpenter   *addons.KarpenterOptions
	removeState bool
}

// Start builds what is missing, then starts every component and waits until
// the whole chain is ready: /readyz, the simulated nodes Ready, KEDA's
// APIService Available, the agent-sandbox controller healthy and (unless
// skipped) a warm pool of 1 Ready. On failure it stops what it started.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if err := livetests.Refuse("start a local control plane"); err != nil {
		return nil, err
	}
	if opts.RealNodes > 0 {
		if err := livetests.RefuseRealNodes(); err != nil {
			return nil, err
		}
		// Before anything is built: a real node's tools take minutes.
		if os.Geteuid() != 0 {
			return nil, errors.New("real nodes need root (containerd, the kubelet, bridges and iptables rules): run as root, or without real nodes")
		}
	}
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if opts.RealNodes < 0 || opts.RealNodes > host.MaxRealNodes {
		return nil, fmt.Errorf("RealNodes is %d: want 0..%d", opts.RealNodes, host.MaxRealNodes)
	}
	if opts.Nodes < 0 || opts.Nodes > host.MaxKWOKNodes {
		return nil, fmt.Errorf("Nodes is %d: want 0..%d (each simulated node gets a /24 of %s)", opts.Nodes, host.MaxKWOKNodes, host.KWOKPodCIDR)
	}
	if opts.Nodes == 0 && opts.RealNodes == 0 {
		opts.Nodes = 1
	}
	if opts.HPASyncPeriod <= 0 {
		opts.HPASyncPeriod = 15 * time.Second
	}
	without := map[string]bool{}
	for _, w := range opts.Without {
		if w != "agent-sandbox-controller" && w != "keda" {
			return nil, fmt.Errorf("unknown component %q in Without (known: agent-sandbox-controller, keda)", w)
		}
		without[w] = true
	}
	var karpenter *addons.KarpenterOptions
	if opts.Karpenter != nil {
		if opts.Nodes == 0 {
			return nil, errors.New("Options.Karpenter needs simulated nodes (Nodes > 0): its nodes are KWOK's, and KWOK runs with them")
		}
		k, err := opts.Karpenter.WithDefaults()
		if err != nil {
			return nil, err
		}
		karpenter = &k
	}
	bins, err := toolcache.Ensure(ctx, opts.Progress, neededTools(opts)...)
	if err != nil {
		return nil, err
	}
	c := &Cluster{StateDir: opts.StateDir, Binaries: bins, HPASyncPeriod: opts.HPASyncPeriod, karpenter: karpenter}
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
	c.plane = &plane.Plane{
		StateDir: c.StateDir, Bins: bins, Procs: process.NewSet(c.StateDir, opts.OutliveCaller), Progress: opts.Progress,
		HPASyncPeriod: opts.HPASyncPeriod, SchedulerLogLevel: opts.SchedulerLogLevel, RealNodes: opts.RealNodes, Without: without,
		IsolatedRuntimeClass: opts.IsolatedRuntimeClass, WarmPoolCheck: !opts.SkipWarmPoolCheck,
	}
	c.kinds = nodes.Kinds(c.plane, opts.Nodes, opts.RealNodes, opts.KwokStages)
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n(logs of every process are in %s)", err, filepath.Join(c.StateDir, "logs"))
			_ = c.teardown()
		}
	}()
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	c.publish()
	return c, nil
}

// publish copies what the plane knows once it runs into the public fields.
func (c *Cluster) publish() {
	pl := c.plane
	c.Kubeconfig, c.APIServerURL, c.Config, c.Client, c.Dynamic = pl.Kubeconfig, pl.APIServerURL, pl.Config, pl.Client, pl.Dynamic
	if pl.PKI != nil {
		c.CAFile = pl.PKI.Path(pki.ClusterCA + ".crt")
	}
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
	pl := &plane.Plane{StateDir: abs, Procs: procs, Kubeconfig: filepath.Join(abs, "kubeconfig"), Progress: os.Stderr, RealNodes: nodes.CountReal(abs)}
	c := &Cluster{StateDir: abs, plane: pl, kinds: nodes.Kinds(pl, 0, pl.RealNodes, nil)}
	if err := pl.Connect(); err != nil {
		return nil, err
	}
	c.publish()
	return c, nil
}

// Log returns the path of a component's log (e.g. "kube-apiserver").
func (c *Cluster) Log(name string) string { return process.LogPath(c.StateDir, name) }

// MetricsAddrs are where the loop's controllers serve their Prometheus metrics (plain HTTP,
// /metrics, on loopback), by process name: what a Prometheus beside the control plane scrapes
// as a cluster's would scrape their metrics Services.
func (c *Cluster) MetricsAddrs() map[string]string {
	at := func(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
	return map[string]string{
		"keda-operator":            at(c.plane.Ports.KEDAMetrics),
		"keda-adapter":             at(c.plane.Ports.AdapterMetrics),
		"agent-sandbox-controller": at(c.plane.Ports.SandboxMetrics),
	}
}

// KEDAOperatorMetricsURL is where KEDA's operator serves its Prometheus metrics
// (keda_scaler_detail_errors_total among them), as its metrics Service does in a cluster.
func (c *Cluster) KEDAOperatorMetricsURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(c.plane.Ports.KEDAMetrics) + "/metrics"
}
