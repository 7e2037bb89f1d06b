package nodes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// LoopbackOnlyRuntimeClass runs pods with runc and only loopback: the
// "no isolation" stand-in of a reject run (same network as a sandbox, the
// node's kernel).
const LoopbackOnlyRuntimeClass = "localcluster-runc-loopback-only"

// RealNodeName is the name of real node i.
func RealNodeName(i int) string { return fmt.Sprintf("realnode-%d", i) }

// Real are kubelets on this machine, each with its containerd, and one
// kube-proxy for them all. They own their nodes, the host ledger (what they
// changed on the machine, which cleanup undoes) and the directory of the
// nodes' own programs.
type Real struct {
	pl     *plane.Plane
	nodes  []*procspec.RealNode
	ledger *host.Ledger
	// programDir holds the node's own programs (its CNI plugin).
	programDir string
}

func newReal(pl *plane.Plane, count int) *Real {
	k := &Real{pl: pl}
	for i := 0; i < count; i++ {
		name := RealNodeName(i)
		k.nodes = append(k.nodes, &procspec.RealNode{Name: name, Index: i, Dir: filepath.Join(pl.StateDir, name), Cgroup: "localcluster-" + name})
	}
	return k
}

// Names are the real nodes' names.
func (k *Real) Names() []string {
	var names []string
	for _, n := range k.nodes {
		names = append(names, n.Name)
	}
	return names
}

// Prepare runs before the API server (which listens on the bridge's
// address): prerequisites, leftovers of a killed control plane, the host
// network, the nodes' certificates. Nothing here runs without real nodes. (Its
// tools were built with the control plane's, and Start checked for root.)
func (k *Real) Prepare(ctx context.Context) error {
	pl := k.pl
	if err := host.EnsureNodePrereqs(ctx, pl.Progress); err != nil {
		return err
	}
	if err := host.CleanPreviousOwner(pl.Say); err != nil {
		return err
	}
	k.ledger = host.NewLedger(pl.StateDir)
	if err := host.ClaimRealNodes(pl.StateDir); err != nil {
		return err
	}
	if err := host.SetupNetwork(k.ledger); err != nil {
		return err
	}
	return pl.PKI.RealNodeCerts(k.Names())
}

// Start starts, per node, containerd (with the local images) and the
// kubelet, then kube-proxy, and waits until every real node is Ready.
func (k *Real) Start(ctx context.Context) error {
	pl := k.pl
	// (Their certificates were made before the API server started.)
	archives, programDir, err := imageArchives(ctx, pl.Progress)
	if err != nil {
		return err
	}
	k.programDir = programDir
	for _, n := range k.nodes {
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			return err
		}
		ports, err := freeport.Ports(2)
		if err != nil {
			return err
		}
		n.KubeletPort, n.KubeletHealthPort = ports[0], ports[1]
		cniConfDir, err := host.WriteCNIConfig(n.Dir, n.Index)
		if err != nil {
			return err
		}
		if err := host.RecordContainerd(k.ledger, n.ContainerdDir(), n.ContainerdSocket()); err != nil {
			return err
		}
		containerd := procspec.Containerd(procspec.ContainerdSettings{
			Binary: pl.Bins.Path("containerd"), Runsc: pl.Bins.Path("runsc"), Node: n,
			Paths: procspec.ContainerdPathsOf(n, cniConfDir, pl.Bins.Path("containerd-shim-runc-v2"), pl.Bins.Path("containerd-shim-runsc-v1"), k.programDir),
		})
		if err := containerd.Run(ctx, pl.Procs, pl.PKI); err != nil {
			return err
		}
		start := time.Now()
		if err := k.importImages(ctx, n, archives); err != nil {
			return err
		}
		pl.Say("imported %d images into %s's containerd in %s", len(archives), n.Name, time.Since(start).Round(100*time.Millisecond))
		if err := pki.WriteKubeconfig(pl.PKI, pl.APIServerURL, n.KubeletKubeconfig(), n.Name+"-client"); err != nil {
			return err
		}
		if err := host.PrepareKubelet(k.ledger, n.Cgroup); err != nil {
			return err
		}
		if _, err := procspec.Kubelet(procspec.KubeletSettings{Binary: pl.Bins.Path("kubelet"), Node: n, PKI: pl.PKI}).Start(pl.Procs); err != nil {
			return err
		}
	}
	proxy := procspec.KubeProxySettings{Binary: pl.Bins.Path("kube-proxy"), Dir: filepath.Join(pl.StateDir, "kube-proxy"), NodeName: k.nodes[0].Name,
		HealthPort: pl.Ports.KubeProxyHealth, MetricsPort: pl.Ports.KubeProxyMetrics}
	if err := pki.WriteKubeconfig(pl.PKI, pl.APIServerURL, proxy.Kubeconfig(), "kube-proxy"); err != nil {
		return err
	}
	if err := host.RecordKubeProxy(k.ledger, proxy.Binary); err != nil {
		return err
	}
	if _, err := procspec.KubeProxy(proxy).Start(pl.Procs); err != nil {
		return err
	}
	return pl.WaitFor(ctx, fmt.Sprintf("real nodes %v to be Ready", k.Names()), 180*time.Second, pl.NodesReady(k.Names()...))
}

func (k *Real) Objects() []map[string]any { return realNodeObjects() }

func (k *Real) IsolatedRuntimeClass(name string) map[string]any {
	return realNodeIsolatedRuntimeClass(name)
}

func (k *Real) Cleanup() error {
	if err := host.Clean(k.pl.StateDir, k.pl.Bins.Path("kube-proxy")); err != nil {
		return err
	}
	return host.ReleaseOwner(k.pl.StateDir)
}

// realNodeIsolatedRuntimeClass is the isolated RuntimeClass as real nodes
// serve it: gVisor's runsc, on real nodes only (a simulated node has no runsc).
func realNodeIsolatedRuntimeClass(name string) map[string]any {
	return map[string]any{
		"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata":   map[string]any{"name": name},
		"handler":    procspec.RunscHandler,
		"scheduling": map[string]any{"nodeSelector": map[string]any{procspec.SandboxNodeLabel: "true", procspec.RealNodeLabel: "true"}},
	}
}

// realNodeObjects are the API objects real nodes need besides the isolated
// RuntimeClass: the loopback-only RuntimeClass and the API server's right to
// use the kubelets' API.
func realNodeObjects() []map[string]any {
	return []map[string]any{
		{
			"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
			"metadata":   map[string]any{"name": LoopbackOnlyRuntimeClass},
			"handler":    procspec.RuncLoopbackHandler,
			"scheduling": map[string]any{"nodeSelector": map[string]any{procspec.RealNodeLabel: "true"}},
		},
		{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": "localcluster:apiserver-kubelet-client"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:kubelet-api-admin"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "kube-apiserver-kubelet-client"}},
		},
	}
}

// Stop removes the pods of the real nodes through their kubelets
// (so CNI releases addresses and the runtime its mounts), within a bound;
// host.Clean then removes whatever is left by its own record.
func (k *Real) Stop(ctx context.Context) {
	if k.pl.Client == nil {
		return
	}
	for _, n := range k.nodes {
		pods, err := k.pl.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
		if err != nil {
			return
		}
		zero := int64(0)
		for _, pod := range pods.Items {
			_ = k.pl.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	// Up to 20 s for containerd's tasks to go (not bounded by ctx: teardown runs after an
	// interrupt too); what is left then is host.Clean's.
	_ = poll.Until(context.Background(), 20*time.Second, 250*time.Millisecond, func(context.Context) (bool, error) {
		left := 0
		for _, n := range k.nodes {
			files, _ := filepath.Glob(filepath.Join(n.ContainerdDir(), "state", "io.containerd.runtime.v2.task", "*", "*"))
			left += len(files)
		}
		return left == 0, nil
	})
}

// CountReal finds how many real nodes a control plane in stateDir had.
func CountReal(stateDir string) int {
	dirs, _ := filepath.Glob(filepath.Join(stateDir, "realnode-*"))
	if len(dirs) == 0 {
		if _, err := os.Stat(filepath.Join(stateDir, host.LedgerFile)); err == nil {
			return 1 // the host was being prepared when it stopped
		}
	}
	return len(dirs)
}
