package pulumirun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// Home is where every Pulumi run here happens, inline (New) or by the CLI in a project
// directory: a private PULUMI_HOME with the locally built plugins installed, a file backend
// and a TMPDIR, all under one work directory.
type Home struct {
	// Pulumi is the CLI.
	Pulumi string
	// Dir is PULUMI_HOME; Backend the file backend's directory.
	Dir, Backend string
	// Env is what every command runs with, on top of the caller's environment.
	Env map[string]string
}

// Plugin is a resource plugin binary and the version it is installed as.
type Plugin struct {
	Name, Version, File string
}

// NewHome prepares the home under workDir: the Kubernetes provider installed as
// toolcache.ProviderVersion, and plugins beside it (the engine never downloads one here).
func NewHome(ctx context.Context, workDir string, out io.Writer, plugins ...Plugin) (*Home, error) {
	bins, err := toolcache.Ensure(ctx, out, toolcache.Pulumi...)
	if err != nil {
		return nil, err
	}
	h := &Home{Pulumi: bins.Path("pulumi"), Dir: filepath.Join(workDir, "pulumi-home"), Backend: filepath.Join(workDir, "state")}
	// The Kubernetes provider writes the kubeconfig it is given (client key included) to a new
	// file in $TMPDIR on every configure and never removes it (writeKubeconfigToFile in
	// pulumi-kubernetes' provider/util.go, for Helm): kept under the work dir, they go with it.
	tmp := filepath.Join(workDir, "tmp")
	for _, d := range []string{h.Dir, h.Backend, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	h.Env = map[string]string{
		"PULUMI_HOME":                h.Dir,
		"TMPDIR":                     tmp,
		"PULUMI_BACKEND_URL":         "file://" + h.Backend,
		"PULUMI_CONFIG_PASSPHRASE":   Passphrase,
		"PULUMI_SKIP_UPDATE_CHECK":   "true",
		"PULUMI_DIY_BACKEND_NO_LOCK": "false",
		// The engine must never fetch a plugin: everything is installed here.
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
	}
	for _, p := range append([]Plugin{{"kubernetes", toolcache.ProviderVersion, bins.Path("pulumi-resource-kubernetes")}}, plugins...) {
		if out, err := h.Command(ctx, "", "plugin", "install", "resource", p.Name, p.Version, "--file", p.File).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("installing the %s plugin: %w: %s", p.Name, err, out)
		}
	}
	return h, nil
}

// Command is the CLI with args, run in dir ("" for the caller's) with the home's environment.
func (h *Home) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.Pulumi, args...)
	cmd.Dir, cmd.Env = dir, os.Environ()
	for k, v := range h.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}
