// Command demo is the newcomer's first command (./demo): a local control plane,
// `pulumi up` of the program against it, and verify's report; then it leaves
// everything up to explore. Where the machine can (Linux, root, Debian's
// packages installable) the control plane has a real node and the stack runs
// as on EKS: the exporter is its Deployment, KEDA reads it through its Service's
// cluster DNS name, and verify execs into gVisor sandboxes. Otherwise it says
// why in one line and runs on simulated (KWOK) nodes, with the exporter as a
// local process. The program runs inline (awsprogram.Run), as the end-to-end tests run it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/freeport"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// usage is what -h says; the demo takes no arguments (DEMO_KWOK=1 asks for simulated nodes).
const usage = `usage: ./demo
  Starts a local control plane (a real node where the machine can, simulated KWOK nodes
  otherwise, or with DEMO_KWOK=1), runs pulumi up of this program against it and verify's
  report, and leaves it up to explore; it prints how to tear it down.`

func main() {
	if len(os.Args) > 1 {
		if a := os.Args[1]; a == "-h" || a == "-help" || a == "--help" {
			fmt.Println(usage)
			return
		}
		fmt.Fprintf(os.Stderr, "demo: it takes no arguments, and was given %q\n%s\n", os.Args[1:], usage)
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is one run: where it keeps its files, whether its node is real, and
// the numbered steps it announces.
type demo struct {
	dir, state string
	real       bool
	steps, n   int
}

func (d *demo) step(s string) { d.n++; fmt.Printf("\n== %d/%d %s ==\n", d.n, d.steps, s) }

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := newDemo()
	if err != nil {
		return err
	}
	c, err := d.startCluster(ctx)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Stop()
		}
	}()
	dep, err := d.deploy(ctx, c)
	if err != nil {
		return err
	}
	verifyErr := d.verify(ctx, c, dep)
	ok = true
	if err := d.printNextSteps(ctx, c, dep); err != nil {
		return errors.Join(verifyErr, fmt.Errorf("building kubectl for the closing commands: %w", err))
	}
	if verifyErr != nil {
		return fmt.Errorf("verify failed: %w", verifyErr)
	}
	return nil
}

// newDemo stops the previous demo's control plane, clears its files and
// decides the node kind.
func newDemo() (*demo, error) {
	cache, err := toolcache.Dir()
	if err != nil {
		return nil, err
	}
	d := &demo{dir: filepath.Join(cache, "demo"), steps: 3}
	d.state = filepath.Join(d.dir, "cluster")
	if c, err := localcluster.Attach(d.state); err == nil {
		fmt.Println("demo: stopping the previous demo's control plane")
		_ = c.Stop()
	}
	_ = os.RemoveAll(d.dir)
	real, why := host.RealNodesPossible()
	if os.Getenv("DEMO_KWOK") == "1" {
		real, why = false, "DEMO_KWOK=1"
	}
	d.real = real
	if !real {
		fmt.Printf("demo: no real node (%s): running on simulated KWOK nodes, the exporter as a local process\n", why)
		d.steps = 4
	}
	return d, nil
}

func (d *demo) startCluster(ctx context.Context) (*localcluster.Cluster, error) {
	opts := localcluster.Options{StateDir: d.state, RealNodes: 1, OutliveCaller: true}
	if d.real {
		d.step("start the local control plane with a real node (builds the tools on first use)")
	} else {
		opts.RealNodes = 0
		d.step("start the local control plane (builds the tools on first use)")
	}
	return framework.StartCluster(ctx, opts)
}

// deployment is what `pulumi up` made and how verify reaches it.
type deployment struct {
	config                               map[string]string
	outputsFile, ns, exporter            string
	exporterAddr, demandURL, exporterURL string
	exporterServiceAccount               string
}

// deploy runs `pulumi up` of the program against the cluster. On KWOK nodes
// nothing runs in the cluster: KEDA reads the exporter where this command runs it.
func (d *demo) deploy(ctx context.Context, c *localcluster.Cluster) (*deployment, error) {
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	dep := &deployment{outputsFile: filepath.Join(d.dir, "outputs.json")}
	if d.real {
		d.step("pulumi up (existing cluster, isolated-sandbox = gVisor on the real node, KEDA and agent-sandbox adopted)")
		dep.config = framework.RealNodeStackConfig(kubeconfig)
	} else {
		d.step("pulumi up (existing cluster, isolated-sandbox required, KEDA and agent-sandbox adopted)")
		if dep.exporterAddr, err = freeport.Addr(); err != nil {
			return nil, err
		}
		dep.demandURL = "http://" + dep.exporterAddr + "/demand"
		dep.config = framework.LocalStackConfig(kubeconfig, dep.demandURL)
	}
	st, err := framework.NewStack(ctx, filepath.Join(d.dir, "pulumi"), "demo", dep.config, os.Stdout)
	if err != nil {
		return nil, err
	}
	outputs, err := framework.Up(ctx, st, os.Stdout)
	if err != nil {
		return nil, err
	}
	if err := outputs.WriteFile(dep.outputsFile); err != nil {
		return nil, err
	}
	dep.ns, dep.exporter = outputs.String("namespace"), outputs.String("exporterService")
	dep.exporterURL, dep.exporterServiceAccount = outputs.String("exporterUrl"), outputs.String("exporterServiceAccount")
	return dep, nil
}

// verify waits for the exporter (its Deployment on a real node, a local
// process otherwise) and runs verify's demand and control phases.
func (d *demo) verify(ctx context.Context, c *localcluster.Cluster, dep *deployment) error {
	verifyBin, err := framework.GoBuild(os.Stdout, d.dir, framework.Module+"/verify")
	if err != nil {
		return err
	}
	verifyArgs := []string{"--outputs-file", dep.outputsFile, "--kubeconfig", c.Kubeconfig, "--phase", "all"}
	if d.real {
		fmt.Printf("waiting for the exporter's Deployment (its first start compiles the exporter in the pod)\n")
		if err := framework.WaitDeploymentAvailable(ctx, c.Client, dep.ns, dep.exporter, 30*time.Minute); err != nil {
			return err
		}
		verifyArgs = append(verifyArgs, "--require-exec", "--probe-url", "http://1.1.1.1/")
	} else {
		d.step("the exporter, as a local process with a TokenRequest token of " + dep.ns + "/" + dep.exporterServiceAccount)
		if err := startLocalExporter(ctx, c, d.dir, dep.ns, dep.exporterServiceAccount, dep.exporterAddr); err != nil {
			return err
		}
		fmt.Printf("exporter serving %s (log: %s)\n", dep.demandURL, c.Log("claim-exporter"))
		verifyArgs = append(verifyArgs, "--exporter-url", dep.demandURL)
	}
	d.step("verify (demand and control phases; KEDA reads " + dep.exporterURL + ")")
	verify := exec.CommandContext(ctx, verifyBin, verifyArgs...)
	verify.Stdout, verify.Stderr = os.Stdout, os.Stderr
	return verify.Run()
}

// printNextSteps says how to explore what is left up and how to tear it down, with the tool
// cache's kubectl (built here on first use: the machine the README sets up has none).
func (d *demo) printNextSteps(ctx context.Context, c *localcluster.Cluster, dep *deployment) error {
	bins, err := toolcache.Ensure(ctx, os.Stdout, toolcache.Kubectl...)
	if err != nil {
		return err
	}
	_, curlErr := exec.LookPath("curl")
	steps := framework.NextSteps{Kubeconfig: c.Kubeconfig, Kubectl: bins.Path("kubectl"), Namespace: dep.ns,
		OutputsFile: dep.outputsFile, StateDir: d.state, Curl: curlErr == nil}
	if d.real {
		steps.Exporter = dep.exporter
	} else { // on KWOK nodes the exporter is this command's local process
		steps.DemandURL = dep.demandURL
	}
	steps.Print(os.Stdout)
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
