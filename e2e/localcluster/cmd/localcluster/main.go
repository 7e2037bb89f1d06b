// Command localcluster runs the local control plane by hand:
//
//	go run -C e2e/localcluster ./cmd/localcluster up     # build what is missing, start, print KUBECONFIG
//	go run -C e2e/localcluster ./cmd/localcluster env    # print KUBECONFIG=... of the running one
//	go run -C e2e/localcluster ./cmd/localcluster down   # stop exactly its processes, remove its state
//	go run -C e2e/localcluster ./cmd/localcluster build  # only build (or find) the tools (or: build gvisor containerd)
//	go run -C e2e/localcluster ./cmd/localcluster prereqs  # install the Debian packages real nodes need (root, apt-get)
//
// from the repository's root. e2e/localcluster is a module of its own: -C runs the go command,
// and this command, in it, so a relative --state DIR is read from there.
//
// `up --real-nodes 1` adds a real node: kubelet, containerd, runc, gVisor.
// `up --karpenter` adds Karpenter (its KWOK cloud provider), which launches
// simulated nodes for pods no node fits.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	verb := os.Args[1]
	if verb == "-h" || verb == "-help" || verb == "--help" { // asked for: the usage on stdout, exit 0
		fmt.Println(usageLine)
		fmt.Println("each verb lists its flags: localcluster <verb> --help")
		return
	}
	fs := flag.NewFlagSet(verb, flag.ExitOnError)
	state := fs.String("state", "", "state directory (default: <cache>/clusters/default)")
	nodes := fs.Int("nodes", 0, "number of simulated (KWOK) nodes (default 1, or 0 with real nodes)")
	realNodes := fs.Int("real-nodes", 0, "number of real nodes (kubelet, containerd, runc, gVisor; needs root)")
	isolated := fs.String("isolated-runtime-class", contract.RuntimeClassName, "the RuntimeClass that runs pods in gVisor on real nodes (empty: none)")
	karpenter := fs.Bool("karpenter", false, "run Karpenter with its KWOK cloud provider and a NodePool "+localcluster.KarpenterNodePool)
	launchDelay := fs.Duration("karpenter-launch-delay", 0, "Karpenter's launch delay, NodeClaim to Node (default 30s)")
	hpaSync := fs.Duration("hpa-sync-period", 15*time.Second, "kube-controller-manager --horizontal-pod-autoscaler-sync-period (EKS uses 15s)")
	_ = fs.Parse(os.Args[2:])
	if *state == "" {
		cache, err := toolcache.Dir()
		if err != nil {
			fail(err)
		}
		*state = filepath.Join(cache, "clusters", "default")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch verb {
	case "build":
		// Named tools only (e.g. `build gvisor containerd`), or all of them.
		if _, err := toolcache.Ensure(ctx, os.Stderr, fs.Args()...); err != nil {
			fail(err)
		}
		fmt.Println("tools are built")
	case "prereqs":
		if err := host.EnsureNodePrereqs(ctx, os.Stderr); err != nil {
			fail(err)
		}
		fmt.Println("real nodes' packages are installed:", strings.Join(host.NodePrereqPackages(), " "))
	case "up":
		opts := localcluster.Options{StateDir: *state, Nodes: *nodes, RealNodes: *realNodes, HPASyncPeriod: *hpaSync, IsolatedRuntimeClass: *isolated, OutliveCaller: true}
		if *karpenter {
			opts.Karpenter = &localcluster.KarpenterOptions{LaunchDelay: *launchDelay}
		}
		c, err := localcluster.Start(ctx, opts)
		if err != nil {
			fail(err)
		}
		fmt.Printf("KUBECONFIG=%s\n", c.Kubeconfig)
		fmt.Fprintf(os.Stderr, "logs: %s\nstop it with: go run -C e2e/localcluster ./cmd/localcluster down --state %s\n",
			filepath.Join(c.StateDir, "logs"), c.StateDir)
	case "env":
		c, err := localcluster.Attach(*state)
		if err != nil {
			fail(err)
		}
		if ok, dead := c.Running(); !ok {
			fail(fmt.Errorf("the control plane in %s is not fully running (stopped: %v); run down, then up", c.StateDir, dead))
		}
		fmt.Printf("KUBECONFIG=%s\n", c.Kubeconfig)
	case "down":
		c, err := localcluster.Attach(*state)
		if err != nil {
			fail(err)
		}
		if err := c.Stop(); err != nil {
			fail(err)
		}
		if err := c.RemoveState(); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "stopped and removed %s\n", c.StateDir)
	default:
		usage()
		os.Exit(2)
	}
}

const usageLine = "usage: localcluster up|env|down|build|prereqs [--state DIR] [--nodes N] [--real-nodes N] [--hpa-sync-period 15s] [--karpenter [--karpenter-launch-delay 30s]] [tool...]"

func usage() { fmt.Fprintln(os.Stderr, usageLine) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "localcluster:", err)
	os.Exit(1)
}
