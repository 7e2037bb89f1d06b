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
	"syscall"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/framework"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
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
	cache, err := localcluster.CacheDir()
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
	step := func(s string) { fmt.Printf("\n== %s ==\n", s) }

	real, why := localcluster.RealNodesPossible()
	if os.Getenv("DEMO_KWOK") == "1" {
		real, why = false, "DEMO_KWOK=1"
	}
	if real {
		return runOnRealNode(ctx, dir, state, step)
	}
	fmt.Printf("demo: no real node (%s): running on simulated KWOK nodes, the exporter as a local process\n", why)

	step("1/4 start the local control plane (builds the tools on first use)")
	c, err := localcluster.Start(ctx, localcluster.Options{StateDir: state})
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Stop()
		}
	}()
	exporterAddr, err := framework.FreeAddr()
	if err != nil {
		return err
	}
	demandURL := "http://" + exporterAddr + "/demand"
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}

	step("2/4 pulumi up (existing cluster, isolated-sandbox required, KEDA and agent-sandbox adopted)")
	st, err := framework.NewStack(ctx, filepath.Join(dir, "pulumi"), "demo", framework.LocalStackConfig(kubeconfig, demandURL), os.Stdout)
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
	ns, sa := outputs.String("namespace"), outputs.String("exporterServiceAccount")

	step("3/4 the exporter, as a local process with a TokenRequest token of " + ns + "/" + sa)
	var bins []string
	for _, pkg := range []string{"/exporter/cmd/claim-exporter", "/verify"} {
		bin, err := framework.GoBuild(os.Stdout, dir, framework.Module+pkg)
		if err != nil {
			return err
		}
		bins = append(bins, bin)
	}
	token, err := framework.Token(ctx, c.Client, ns, sa)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "exporter-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return err
	}
	if err := c.StartProcess("claim-exporter", bins[0], []string{"--api-url", c.APIServerURL,
		"--token-file", tokenFile, "--ca-file", c.CAFile, "--namespace", ns, "--listen", exporterAddr}); err != nil {
		return err
	}
	fmt.Printf("exporter serving %s (log: %s)\n", demandURL, c.Log("claim-exporter"))

	step("4/4 verify (demand and control phases)")
	verify := exec.CommandContext(ctx, bins[1], "--outputs-file", outputsFile, "--kubeconfig", c.Kubeconfig,
		"--exporter-url", demandURL, "--phase", "all")
	verify.Stdout, verify.Stderr = os.Stdout, os.Stderr
	verifyErr := verify.Run()
	ok = true
	fmt.Printf(`
The local control plane is still up, with the stack deployed. Explore it:
  export KUBECONFIG=%s
  kubectl -n %s get sandboxwarmpool,sandboxclaim,scaledobject,hpa,pods
  curl -s %s
  cat %s        # the stack's outputs, as verify read them
Tear it down:
  go run ./e2e/localcluster/cmd/localcluster down --state %s
Logs of every process: %s
`, c.Kubeconfig, ns, demandURL, outputsFile, state, filepath.Join(state, "logs"))
	if verifyErr != nil {
		return fmt.Errorf("verify failed: %w", verifyErr)
	}
	return nil
}

// runOnRealNode is the demo with a real node: no stand-in for any part of the product.
func runOnRealNode(ctx context.Context, dir, state string, step func(string)) error {
	step("1/3 start the local control plane with a real node (builds the tools on first use)")
	c, err := localcluster.Start(ctx, localcluster.Options{StateDir: state, RealNodes: 1})
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
	step("2/3 pulumi up (existing cluster, isolated-sandbox = gVisor on the real node, KEDA and agent-sandbox adopted)")
	st, err := framework.NewStack(ctx, filepath.Join(dir, "pulumi"), "demo", framework.RealNodeStackConfig(kubeconfig), os.Stdout)
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
	ns := outputs.String("namespace")
	fmt.Printf("waiting for the exporter's Deployment (its first start compiles the exporter in the pod)\n")
	if err := framework.WaitDeploymentAvailable(ctx, c.Client, ns, outputs.String("exporterService"), 30*time.Minute); err != nil {
		return err
	}
	verifyBin, err := framework.GoBuild(os.Stdout, dir, framework.Module+"/verify")
	if err != nil {
		return err
	}
	step("3/3 verify (demand and control phases; KEDA reads " + outputs.String("exporterUrl") + ")")
	verify := exec.CommandContext(ctx, verifyBin, "--outputs-file", outputsFile, "--kubeconfig", c.Kubeconfig,
		"--phase", "all", "--require-exec", "--probe-url", "http://1.1.1.1/")
	verify.Stdout, verify.Stderr = os.Stdout, os.Stderr
	verifyErr := verify.Run()
	ok = true
	fmt.Printf(`
The local control plane is still up, with a real node and the stack deployed. Explore it:
  export KUBECONFIG=%s
  kubectl -n %s get sandboxwarmpool,sandboxclaim,scaledobject,hpa,pods -o wide
  kubectl -n %s logs deploy/%s
  cat %s        # the stack's outputs, as verify read them
Tear it down (removes every process, mount, interface and rule it made):
  go run ./e2e/localcluster/cmd/localcluster down --state %s
Logs of every process: %s
`, c.Kubeconfig, ns, ns, outputs.String("exporterService"), outputsFile, state, filepath.Join(state, "logs"))
	if verifyErr != nil {
		return fmt.Errorf("verify failed: %w", verifyErr)
	}
	return nil
}
