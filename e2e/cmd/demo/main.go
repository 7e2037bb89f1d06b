// Command demo is the newcomer's first command (./demo): a local control plane,
// `pulumi up` of the program against it, the exporter with a real token of its
// ServiceAccount, and verify's report; then it leaves everything up to explore.
// The program runs inline, exactly as the end-to-end test runs it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/localcluster"
	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/pulumirun"
	"github.com/warmpool/warm-pool-autoscaling-keda/program"
)

func main() {
	if err := runDemo(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func runDemo() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cache, err := localcluster.CacheDir()
	if err != nil {
		return err
	}
	root, err := os.Getwd()
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
	exporterAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}

	step("2/4 pulumi up (existing cluster, isolated-sandbox required, KEDA and agent-sandbox adopted)")
	st, err := pulumirun.New(ctx, pulumirun.Options{WorkDir: filepath.Join(dir, "pulumi"), ProjectFile: filepath.Join(root, "Pulumi.yaml"),
		StackName: "demo", Program: program.Run, Config: map[string]string{
			"clusterMode": "existing", "kubeconfig": string(kubeconfig), "runtimeClassMode": "require",
			"agentSandboxMode": "adopt", "kedaMode": "adopt", "exporterUrl": "http://" + exporterAddr + "/demand", "pollingInterval": "5",
		}})
	if err != nil {
		return err
	}
	res, err := st.Up(ctx, optup.ProgressStreams(os.Stdout))
	if err != nil {
		return err
	}
	outputs := map[string]any{}
	for k, v := range res.Outputs {
		outputs[k] = v.Value
	}
	b, _ := json.MarshalIndent(outputs, "", "  ")
	outputsFile := filepath.Join(dir, "outputs.json")
	if err := os.WriteFile(outputsFile, b, 0o600); err != nil {
		return err
	}
	ns, sa := fmt.Sprint(outputs["namespace"]), fmt.Sprint(outputs["exporterServiceAccount"])

	step("3/4 the exporter, as a local process with a TokenRequest token of " + ns + "/" + sa)
	bin := filepath.Join(dir, "bin")
	for _, pkg := range []string{"./exporter/cmd/claim-exporter", "./verify"} {
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	exp := int64(3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "exporter-token")
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		return err
	}
	if err := c.StartProcess("claim-exporter", filepath.Join(bin, "claim-exporter"), []string{"--api-url", c.APIServerURL,
		"--token-file", tokenFile, "--ca-file", c.CAFile, "--namespace", ns, "--listen", exporterAddr}); err != nil {
		return err
	}
	fmt.Printf("exporter serving http://%s/demand (log: %s)\n", exporterAddr, c.Log("claim-exporter"))

	step("4/4 go run ./verify (demand and control phases)")
	verify := exec.CommandContext(ctx, filepath.Join(bin, "verify"), "--outputs-file", outputsFile, "--kubeconfig", c.Kubeconfig,
		"--exporter-url", "http://"+exporterAddr+"/demand", "--phase", "all")
	verify.Stdout, verify.Stderr = os.Stdout, os.Stderr
	verifyErr := verify.Run()
	ok = true
	fmt.Printf(`
The local control plane is still up, with the stack deployed. Explore it:
  export KUBECONFIG=%s
  kubectl -n %s get sandboxwarmpool,sandboxclaim,scaledobject,hpa,pods
  curl -s http://%s/demand
  cat %s        # the stack's outputs, as verify read them
Tear it down:
  go run ./e2e/localcluster/cmd/localcluster down --state %s
Logs of every process: %s
`, c.Kubeconfig, ns, exporterAddr, outputsFile, state, filepath.Join(state, "logs"))
	if verifyErr != nil {
		return fmt.Errorf("verify failed: %w", verifyErr)
	}
	return nil
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
