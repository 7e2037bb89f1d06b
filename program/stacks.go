package program

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/internals"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// install is a cluster-wide part that one AutoscaledWarmPool of a stack makes and the others
// adopt: two would fight over one Helm release, one manifest's objects or one RuntimeClass.
type install string

const (
	installKeda         install = "KEDA"
	installAgentSandbox install = "agent-sandbox"
	installRuntimeClass install = "the RuntimeClass " + contract.RuntimeClassName
)

// installs in the order messages name them, with the input that chooses each, the mode that
// makes it and the one that takes the cluster's.
var installs = []struct {
	what             install
	key, makes, uses string
	mode             func(*Config) string
}{
	{installKeda, "kedaMode", components.ModeInstall, components.ModeAdopt, func(c *Config) string { return c.KedaMode }},
	{installAgentSandbox, "agentSandboxMode", components.ModeInstall, components.ModeAdopt, func(c *Config) string { return c.AgentSandboxMode }},
	{installRuntimeClass, "runtimeClassMode", components.ModeCreate, components.ModeRequire, func(c *Config) string { return c.RuntimeClassMode }},
}

// Stacks is what the AutoscaledWarmPool components constructed so far in each stack hold. The
// plugin serves every component of a deployment, one Construct each, and keeps one Stacks: each
// component is checked against the others of its stack before it registers anything.
type Stacks struct {
	mu     sync.Mutex
	stacks map[string]map[string]*held // "<project>/<stack>" -> component name
}

// held is what one component holds in the cluster, and which components it depends on.
type held struct {
	namespaces []string
	makes      map[install]bool
	dependsOn  []string // names of the AutoscaledWarmPools it lists in dependsOn
}

// NewAutoscaledWarmPool is the component checked against the others of its stack: its
// namespaces are its own, it makes no install another makes, and it adopts one another makes
// only when it depends on that component (which then comes first, and is destroyed last).
func (s *Stacks) NewAutoscaledWarmPool(ctx *pulumi.Context, name string, in ComponentInputs, opts ...pulumi.ResourceOption) (*AutoscaledWarmPool, error) {
	cfg, err := LoadComponentConfig(ctx.Project(), ctx.Stack(), name, in)
	if err != nil {
		return nil, err
	}
	dependsOn, err := componentDependencies(ctx, opts)
	if err != nil {
		return nil, err
	}
	shared, err := s.hold(ctx.Project()+"/"+ctx.Stack(), name, cfg, dependsOn)
	if err != nil {
		return nil, err
	}
	c, err := newAutoscaledWarmPool(ctx, name, cfg, shared, opts...)
	if err != nil {
		return nil, err
	}
	return c, warnUnknown(ctx, c, in.Unknown)
}

// hold records what component name holds, refusing it when it clashes with another component of
// the stack, and returns the installs it adopts from another. The same name again is the same
// component (a preview, then the update).
func (s *Stacks) hold(stack, name string, cfg *Config, dependsOn []string) (map[install]bool, error) {
	h := &held{makes: map[install]bool{}, dependsOn: dependsOn}
	for _, ns := range append([]string{cfg.Namespace}, poolNamespaces(cfg)...) {
		if !slices.Contains(h.namespaces, ns) {
			h.namespaces = append(h.namespaces, ns)
		}
	}
	for _, in := range installs {
		h.makes[in.what] = in.mode(cfg) == in.makes
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	others := s.stacks[stack]
	var problems []string
	shared := map[install]bool{}
	for _, other := range sortedKeys(others) {
		if other == name {
			continue
		}
		o := others[other]
		for _, ns := range h.namespaces {
			if slices.Contains(o.namespaces, ns) {
				problems = append(problems, fmt.Sprintf("namespace %q is %q's and %q's: each AutoscaledWarmPool of a stack needs namespaces of its own; "+
					"give %q another namespace (its namespace input, and each pools[].namespace)", ns, other, name, name))
			}
		}
		for _, in := range installs {
			switch {
			case h.makes[in.what] && o.makes[in.what]:
				problems = append(problems, fmt.Sprintf("%q and %q both make %s (%s: %s, the default for KEDA and agent-sandbox): it is cluster-wide, so one component of the stack makes it; "+
					"set %s: %s on %q and list %q in its dependsOn", other, name, in.what, in.key, in.makes, in.key, in.uses, name, other))
			case !h.makes[in.what] && o.makes[in.what]:
				if !slices.Contains(dependsOn, other) {
					problems = append(problems, fmt.Sprintf("%q takes %s from the cluster (%s: %s), and %q of this stack makes it, but %q does not depend on %q: "+
						"list %q in %q's dependsOn (YAML `options: {dependsOn: [${%s}]}`, Go `pulumi.DependsOn(...)`), so %s is there before %q's pools and removed after them",
						name, in.what, in.key, in.uses, other, name, other, other, name, other, in.what, name))
				}
				shared[in.what] = true
			case h.makes[in.what] && !o.makes[in.what] && !slices.Contains(o.dependsOn, name):
				// It came first, so it cannot depend on this one: the same fix, seen from here.
				problems = append(problems, fmt.Sprintf("%q takes %s from the cluster (%s: %s), and %q of this stack makes it, but %q does not depend on %q: "+
					"list %q in %q's dependsOn (YAML `options: {dependsOn: [${%s}]}`, Go `pulumi.DependsOn(...)`), so %s is there before %q's pools and removed after them",
					other, in.what, in.key, in.uses, name, other, name, name, other, name, in.what, other))
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s %q cannot join the stack's other AutoscaledWarmPools:\n  - %s", AutoscaledWarmPoolType, name, strings.Join(problems, "\n  - "))
	}
	if s.stacks == nil {
		s.stacks = map[string]map[string]*held{}
	}
	if s.stacks[stack] == nil {
		s.stacks[stack] = map[string]*held{}
	}
	s.stacks[stack][name] = h
	return shared, nil
}

func poolNamespaces(cfg *Config) []string {
	var out []string
	for _, p := range cfg.Pools() {
		out = append(out, p.Namespace)
	}
	return out
}

func sortedKeys(m map[string]*held) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// componentDependencies are the names of the AutoscaledWarmPools that opts' dependsOn lists (in
// the plugin, the URNs the engine hands Construct).
func componentDependencies(ctx *pulumi.Context, opts []pulumi.ResourceOption) ([]string, error) {
	ro, err := pulumi.NewResourceOptions(opts...)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, dep := range ro.DependsOn {
		got, err := internals.UnsafeAwaitOutput(ctx.Context(), dep.URN())
		if err != nil {
			return nil, err
		}
		urn, ok := got.Value.(pulumi.URN)
		if !ok {
			continue
		}
		if u := resource.URN(urn); u.IsValid() && string(u.Type()) == AutoscaledWarmPoolType {
			names = append(names, u.Name())
		}
	}
	return names, nil
}
