// Command demo is the newcomer's first command (./demo): a local control plane,
// `pulumi up` of the program against it, the exporter with a real token of its
// ServiceAccount, and verify's report; then it leaves everything up to explore.
// The program runs inline (program.Run), exactly as the end-to-end test runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

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
