package components

import (
	corev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/core/v1"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// newOwnedNamespace creates a namespace the stack owns: labelled as this stack's (verify refuses
// any other) and enforcing the restricted Pod Security level.
func newOwnedNamespace(ctx *pulumi.Context, scope Scope, name, stackLabelValue string, opts ...pulumi.ResourceOption) (*corev1.Namespace, error) {
	labels := pulumi.StringMap{
		contract.ManagedByLabel: pulumi.String(contract.ManagedByValue),
		contract.StackLabel:     pulumi.String(stackLabelValue),
	}
	for k, v := range PodSecurityLabels() {
		labels[k] = pulumi.String(v)
	}
	return corev1.NewNamespace(ctx, scope.Name(name), &corev1.NamespaceArgs{
		Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String(name), Labels: labels},
	}, scope.Opts(name, opts...)...)
}

// StackNamespaceArgs names the namespace that holds what the pools share (the claim exporter).
type StackNamespaceArgs struct {
	Namespace       string
	StackLabelValue string
	DependsOn       []pulumi.Resource
	Scope           Scope
}

// StackNamespace is the stack's own namespace when every pool has a namespace of its own.
// (With one pool, the pool's namespace is the stack's, as it always was.)
type StackNamespace struct {
	pulumi.ResourceState

	Namespace     *corev1.Namespace
	NamespaceName pulumi.StringOutput
}

// NewStackNamespace creates the namespace, labelled as this stack's and Pod Security restricted.
func NewStackNamespace(ctx *pulumi.Context, name string, args *StackNamespaceArgs, opts ...pulumi.ResourceOption) (*StackNamespace, error) {
	s := &StackNamespace{}
	if err := ctx.RegisterComponentResource("warmpool:index:StackNamespace", args.Scope.Name(name), s, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	ns, err := newOwnedNamespace(ctx, args.Scope, args.Namespace, args.StackLabelValue, pulumi.Parent(s), pulumi.DependsOn(args.DependsOn))
	if err != nil {
		return nil, err
	}
	s.Namespace, s.NamespaceName = ns, ns.Metadata.Name().Elem()
	return s, ctx.RegisterResourceOutputs(s, pulumi.Map{"namespace": s.NamespaceName})
}
