// Command demo is the newcomer's first command (./demo): a local control plane,
// `pulumi up` of the program against it, and verify's report; then it leaves
// everything up to explore. Where the machine can (Linux, root, Debian's
// packages installable) the control plane has a real node and the stack runs
// as on EKS: the exporter is its Deployment, KEDA reads it through its Service's
// cluster DNS name, and verify execs into gVisor sandboxes. Otherwise it says
// why in one line and runs on simulated (KWOK) nodes, with the exporter as a
// local process. The program runs inline (program.Run), as the end-to-end tests run it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/framework"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/freeport"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/toolcache"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cache, err := toolcache.Dir()
	if err != nil {
		return err
	}
	dir := filepath.Join(cache, "demo")
	state := filepath.Join(dir, "cluster")
	if c, err := localcluster.Attach(state); err == nil {
		fmt.Println("demo: stopping the previous demo's control plane")
		_ = c.Stop()
	}
	_ = os.RemoveAll(dir)

	real, why := localcluster.RealNodesPossible()
	if os.Getenv("DEMO_KWOK") == "1" {
		real, why = false, "DEMO_KWOK=1"
	}
	steps := 3
	opts := localcluster.Options{StateDir: state, RealNodes: 1, OutliveCaller: true}
	if !real {
		fmt.Printf("demo: no real node (%s): running on simulated KWOK nodes, the exporter as a local process\n", why)
		steps, opts.RealNodes = 4, 0
	}
	n := 0
	step := func(s string) { n++; fmt.Printf("\n== %d/%d %s ==\n", n, steps, s) }

	if real {
		step("start the local control plane with a real node (builds the tools on first use)")
	} else {
		step("start the local control plane (builds the tools on first use)")
	}
	c, err := framework.StartCluster(ctx, opts)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Stop()
		}
	}()
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	// On KWOK nodes nothing runs in the cluster: KEDA reads the exporter where this command runs it.
	var config map[string]string
	var exporterAddr, demandURL string
	if real {
		step("pulumi up (existing cluster, isolated-sandbox = gVisor on the real node, KEDA and agent-sandbox adopted)")
		config = framework.RealNodeStackConfig(kubeconfig)
	} else {
		step("pulumi up (existing cluster, isolated-sandbox required, KEDA and agent-sandbox adopted)")
		if exporterAddr, err = freeport.Addr(); err != nil {
			return err
		}
		demandURL = "http://" + exporterAddr + "/demand"
		config = framework.LocalStackConfig(kubeconfig, demandURL)
	}
	st, err := framework.NewStack(ctx, filepath.Join(dir, "pulumi"), "demo", config, os.Stdout)
	if err != nil {
		return err
	}
	outputs, err := framework.Up(ctx, st, os.Stdout)
	if err != nil {
		return err
	}
	outputsFile := filepath.Join(dir, "outputs.json")
	if err := outputs.WriteFile(outputsFile); err != nil {
		return err
	}
	ns, exporter := outputs.String("namespace"), outputs.String("exporterService")
	verifyBin, err := framework.GoBuild(os.Stdout, dir, framework.Module+"/verify")
	if err != nil {
		return err
	}
	verifyArgs := []string{"--outputs-file", outputsFile, "--kubeconfig", c.Kubeconfig, "--phase", "all"}
	if real {
		fmt.Printf("waiting for the exporter's Deployment (its first start compiles the exporter in the pod)\n")
		if err := framework.WaitDeploymentAvailable(ctx, c.Client, ns, exporter, 30*time.Minute); err != nil {
			return err
		}
		verifyArgs = append(verifyArgs, "--require-exec", "--probe-url", "http://1.1.1.1/")
	} else {
		sa := outputs.String("exporterServiceAccount")
		step("the exporter, as a local process with a TokenRequest token of " + ns + "/" + sa)
		if err := startLocalExporter(ctx, c, dir, ns, sa, exporterAddr); err != nil {
			return err
		}
		fmt.Printf("exporter serving %s (log: %s)\n", demandURL, c.Log("claim-exporter"))
		verifyArgs = append(verifyArgs, "--exporter-url", demandURL)
	}

	step("verify (demand and control phases; KEDA reads " + outputs.String("exporterUrl") + ")")
	verify := exec.CommandContext(ctx, verifyBin, verifyArgs...)
	verify.Stdout, verify.Stderr = os.Stdout, os.Stderr
	verifyErr := verify.Run()
	ok = true
	fmt.Printf("\nThe local control plane is still up, with the stack deployed. Explore it:\n  export KUBECONFIG=%s\n", c.Kubeconfig)
	fmt.Printf("  kubectl -n %s get sandboxwarmpool,sandboxclaim,scaledobject,hpa,pods -o wide\n", ns)
	if real {
		fmt.Printf("  kubectl -n %s logs deploy/%s\n", ns, exporter)
	} else {
		fmt.Printf("  curl -s %s\n", demandURL)
	}
	fmt.Printf("  cat %s        # the stack's outputs, as verify read them\n", outputsFile)
	if real { // on KWOK nodes the exporter is this command's local process, which counts the demo's namespace only
		printPulumiCLI(config, c.Kubeconfig)
	}
	fmt.Printf(`Tear it down (removes every process it started and, with a real node, every mount, interface and rule):
  go run ./e2e/localcluster/cmd/localcluster down --state %s
Logs of every process: %s
`, state, filepath.Join(state, "logs"))
	if verifyErr != nil {
		return fmt.Errorf("verify failed: %w", verifyErr)
	}
	return nil
}

// startLocalExporter builds the exporter and runs it beside the control plane (stopped with
// it) with a TokenRequest token of its ServiceAccount, listening on addr.
func startLocalExporter(ctx context.Context, c *localcluster.Cluster, dir, ns, sa, addr string) error {
	bin, err := framework.GoBuild(os.Stdout, dir, framework.ExporterCommand)
	if err != nil {
		return err
	}
	token, err := framework.Token(ctx, c.Client, ns, sa)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "exporter-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return err
	}
	e := framework.LocalExporter{Binary: bin, APIURL: c.APIServerURL, TokenFile: tokenFile, CAFile: c.CAFile, Namespace: ns, Addr: addr}
	_, err = e.Start(ctx, c.Processes(), "claim-exporter")
	return err
}

// printPulumiCLI tells a newcomer with the Pulumi CLI how to run this repository's program
// against the demo cluster as a stack of their own: the demo's config, the kubeconfig by its
// path as a secret, and a namespace of its own beside the demo's stack.
func printPulumiCLI(config map[string]string, kubeconfigPath string) {
	fmt.Printf("With the Pulumi CLI, this repository against the demo cluster (a stack of your own, state on this machine):\n")
	fmt.Printf("  pulumi login --local && pulumi stack init demo-cli\n")
	keys := make([]string, 0, len(config))
	for k := range config {
		if k != "kubeconfig" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fmt.Printf("  pulumi config set --secret kubeconfig %s\n", kubeconfigPath)
	for _, k := range keys {
		fmt.Printf("  pulumi config set %s %q\n", k, config[k])
	}
	fmt.Printf("  pulumi config set namespace warm-pool-cli     # beside the demo's own stack\n")
	fmt.Printf("  pulumi preview && pulumi up && go run ./verify && pulumi destroy\n")
}
