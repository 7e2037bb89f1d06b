package components

import "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

// Scope is the name of the AutoscaledWarmPool component that holds a resource: several of them
// in one stack register the same resources, and a URN carries its parents' types but not their
// names, so each names its resources after itself. The zero Scope is the program's, whose names
// (and so URNs) never change. Kubernetes names are not scoped: what would clash in the cluster
// (namespaces, the cluster-wide installs) is refused instead (program.Stacks).
type Scope string

// Name is a resource's name in the scope: "<scope>-<name>", or name alone in the program.
func (s Scope) Name(name string) string {
	if s == "" {
		return name
	}
	return string(s) + "-" + name
}

// Opts are opts for the resource that Name(name) names, with an alias to the name alone in a
// scope: a stack that ran one component before its resources were scoped finds them under their
// new URNs (the same parents' types, the old name), so nothing is replaced.
func (s Scope) Opts(name string, opts ...pulumi.ResourceOption) []pulumi.ResourceOption {
	if s == "" {
		return opts
	}
	return append(opts[:len(opts):len(opts)], pulumi.Aliases([]pulumi.Alias{{Name: pulumi.String(name)}}))
}
