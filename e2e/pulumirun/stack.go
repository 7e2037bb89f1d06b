// Package pulumirun runs the project's Pulumi program the way a user's
// `pulumi up` does, but through the Automation API with an inline program: the
// real Pulumi CLI and Kubernetes provider (built by localcluster), a private
// PULUMI_HOME, a local file backend and a passphrase secrets provider. No cloud
// account, no Pulumi Cloud, no Go language host (inline programs run in the
// caller's process).
package pulumirun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Passphrase protects the local stack's secrets (the kubeconfig output); the
// state is a throw-away directory.
const Passphrase = "local-control-plane-only"

// Options say which program to run, with which project file and config.
type Options struct {
	// WorkDir holds PULUMI_HOME and the file backend's state.
	WorkDir string
	// ProjectFile is the project's Pulumi.yaml: its name, config schema and
	// defaults, and project-level settings apply exactly as for `pulumi up`.
	ProjectFile string
	StackName   string
	Program     pulumi.RunFunc
	// Config is set on the stack; keys without a namespace get the project's.
	Config map[string]string
	// Output receives build progress when a tool must be built; default stderr.
	Output io.Writer
	// Plugins are resource plugins the program needs besides the Kubernetes provider (NewHome).
	Plugins []Plugin
}

// Stack is one local stack of the program.
type Stack struct {
	auto.Stack
	opts    Options
	project string
}

// New prepares the home under opts.WorkDir (NewHome) and creates or selects the stack.
func New(ctx context.Context, opts Options) (*Stack, error) {
	out := opts.Output
	if out == nil {
		out = os.Stderr
	}
	home, err := NewHome(ctx, opts.WorkDir, out, opts.Plugins...)
	if err != nil {
		return nil, err
	}
	project, err := workspace.LoadProject(opts.ProjectFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", opts.ProjectFile, err)
	}
	project.Backend = &workspace.ProjectBackend{URL: home.Env["PULUMI_BACKEND_URL"]}
	cmd, err := auto.NewPulumiCommand(&auto.PulumiCommandOptions{Root: filepath.Dir(filepath.Dir(home.Pulumi))})
	if err != nil {
		return nil, err
	}
	st, err := auto.UpsertStackInlineSource(ctx, opts.StackName, project.Name.String(), opts.Program,
		auto.Pulumi(cmd), auto.PulumiHome(home.Dir), auto.EnvVars(home.Env), auto.Project(*project),
		auto.WorkDir(opts.WorkDir), auto.SecretsProvider("passphrase"))
	if err != nil {
		return nil, fmt.Errorf("creating stack %s: %w", opts.StackName, err)
	}
	s := &Stack{Stack: st, opts: opts, project: project.Name.String()}
	if err := s.SetConfig(ctx, opts.Config); err != nil {
		return nil, err
	}
	return s, nil
}

// SetConfig replaces the stack's config values with cfg (keys without a
// namespace get the project's).
func (s *Stack) SetConfig(ctx context.Context, cfg map[string]string) error {
	current, err := s.GetAllConfig(ctx)
	if err != nil {
		return err
	}
	for k := range current {
		if err := s.RemoveConfig(ctx, k); err != nil {
			return err
		}
	}
	all, structured := auto.ConfigMap{}, auto.ConfigMap{}
	for k, v := range cfg {
		if !strings.Contains(k, ":") {
			k = s.project + ":" + k
		}
		// A JSON list or object is structured config, as `pulumi config set --path` writes it
		// (the project declares such keys typed: a string would be refused).
		var tree any
		if t := strings.TrimSpace(v); (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) && json.Unmarshal([]byte(t), &tree) == nil {
			flattenConfig(k, tree, structured)
			continue
		}
		// A kubeconfig holds a client key: stored encrypted, as the README has users set it.
		all[k] = auto.ConfigValue{Value: v, Secret: strings.HasSuffix(k, ":kubeconfig")}
	}
	if err := s.SetAllConfig(ctx, all); err != nil {
		return err
	}
	if len(structured) == 0 {
		return nil
	}
	return s.SetAllConfigWithOptions(ctx, structured, &auto.ConfigOptions{Path: true})
}

// flattenConfig turns a JSON tree into the path keys `pulumi config set --path` takes:
// key[0].field.sub = value.
func flattenConfig(key string, tree any, out auto.ConfigMap) {
	switch t := tree.(type) {
	case map[string]any:
		for k, v := range t {
			flattenConfig(key+"."+k, v, out)
		}
	case []any:
		for i, v := range t {
			flattenConfig(fmt.Sprintf("%s[%d]", key, i), v, out)
		}
	default:
		out[key] = auto.ConfigValue{Value: fmt.Sprint(t)}
	}
}
