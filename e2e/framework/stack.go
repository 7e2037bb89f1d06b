package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"

	"warmpool.local/warm-pool-autoscaling-keda/awsprogram"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/pulumirun"
)

// OutputKeys are the stack outputs verify reads; a deploy without one of them is broken.
var OutputKeys = []string{"namespace", "stackLabel", "poolName", "templateName", "scaledObjectName", "exporterServiceAccount",
	"exporterService", "exporterUrl", "claimSelector", "minReplicas", "maxReplicas", "loadCap", "kubeconfig", "clusterName",
	"stackNamespace", "pools"}

// LocalStackConfig is the program's config against a local control plane: an existing cluster,
// the isolated-sandbox RuntimeClass required, KEDA and agent-sandbox adopted. KEDA runs as a
// local process there, so it reads the exporter where the caller runs it (exporterURL), not
// through the Service (there is no kube-proxy).
func LocalStackConfig(kubeconfig []byte, exporterURL string) map[string]string {
	c := existingClusterConfig(kubeconfig)
	c["exporterUrl"] = exporterURL
	return c
}

// RealNodeStackConfig is the program's config against a local control plane with real nodes,
// as a user deploys it: no exporterUrl override (KEDA reads the Service's cluster DNS name
// through the cluster DNS and kube-proxy), and the isolation the node's RuntimeClass gives
// (gVisor, declared so verify judges the readings against it).
func RealNodeStackConfig(kubeconfig []byte) map[string]string {
	c := existingClusterConfig(kubeconfig)
	c["isolation"] = "gvisor"
	return c
}

// existingClusterConfig is what both local configs share: an existing cluster, the
// isolated-sandbox RuntimeClass required, KEDA and agent-sandbox adopted, KEDA polling every 5 s,
// and the demo's scale-down (ImmediateScaleDown).
func existingClusterConfig(kubeconfig []byte) map[string]string {
	return map[string]string{
		"clusterMode":      "existing",
		"kubeconfig":       string(kubeconfig),
		"runtimeClassMode": "require",
		"agentSandboxMode": "adopt",
		"kedaMode":         "adopt",
		"pollingInterval":  "5",
		"scaleDown":        ImmediateScaleDown,
	}
}

// ImmediateScaleDown is the `scaleDown` of the demo, the tests and the burst benchmark: no
// stabilization window, so a drop in demand reaches spec.replicas at the next HPA sync and
// verify's down steps take seconds, not the production window (verify reads the window the
// HPA carries and waits for it either way).
const ImmediateScaleDown = `{"stabilizationWindowSeconds":0}`

// NewStack is a local stack of the program (awsprogram.Run, run inline) with the repository's
// Pulumi.yaml, its state and PULUMI_HOME under workDir.
func NewStack(ctx context.Context, workDir, name string, config map[string]string, progress io.Writer) (*pulumirun.Stack, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	return pulumirun.New(ctx, pulumirun.Options{
		Output: progress, WorkDir: workDir, ProjectFile: filepath.Join(root, "Pulumi.yaml"),
		StackName: name, Program: awsprogram.Run, Config: config,
	})
}

// Outputs are a stack's outputs as plain values, with which of them are secrets.
type Outputs struct {
	Values map[string]any
	Secret map[string]bool
}

// Up runs `pulumi up` and returns the outputs.
func Up(ctx context.Context, st *pulumirun.Stack, progress io.Writer, opts ...optup.Option) (Outputs, error) {
	res, err := st.Up(ctx, append([]optup.Option{optup.ProgressStreams(progress)}, opts...)...)
	if err != nil {
		return Outputs{}, fmt.Errorf("pulumi up: %w", err)
	}
	o := Outputs{Values: map[string]any{}, Secret: map[string]bool{}}
	for k, v := range res.Outputs {
		o.Values[k], o.Secret[k] = v.Value, v.Secret
	}
	return o, nil
}

// String is output key as a string ("" when it is missing or not a string).
func (o Outputs) String(key string) string {
	s, _ := o.Values[key].(string)
	return s
}

// Missing lists the OutputKeys the stack did not export.
func (o Outputs) Missing() []string {
	var out []string
	for _, k := range OutputKeys {
		if _, ok := o.Values[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// WriteFile writes the outputs as verify's --outputs-file reads them
// (`pulumi stack output --json --show-secrets`).
func (o Outputs) WriteFile(path string) error {
	b, err := json.MarshalIndent(o.Values, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// ModuleRoot is the repository's root: the nearest folder up from the working directory with
// the project's go.mod (tests run in their package's folder, the demo in the root).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Pulumi.yaml")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the warm-pool-autoscaling-keda repository (no go.mod with Pulumi.yaml above the working directory)")
		}
		dir = parent
	}
}
