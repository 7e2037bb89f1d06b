package components

import (
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	rbacv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/rbac/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// PreviewAccessArgs names what a `pulumi preview` of this stack reads.
type PreviewAccessArgs struct {
	Namespace pulumi.StringInput
	// NamespaceName is the plain name, for the cluster-scoped rule's resourceNames.
	NamespaceName string
	// SandboxNodes: the stack has its own NodeClass and NodePool, which a refresh reads too.
	SandboxNodes bool
	DependsOn    []pulumi.Resource
}

// PreviewAccess is the read-only RBAC the preview principal's Kubernetes group (PreviewGroup) gets.
type PreviewAccess struct {
	pulumi.ResourceState

	ClusterRole *rbacv1.ClusterRole
	Role        *rbacv1.Role
}

// PreviewRules are the cluster-scoped objects a preview reads: the RuntimeClass it requires, the
// CRDs adopt mode checks, and the namespaces it owns. Only get, and only those names.
func PreviewRules(namespace string) rbacv1.PolicyRuleArray {
	crds := append([]string{contract.ScaledObjectCRD}, contract.AgentSandboxCRDs...)
	return rbacv1.PolicyRuleArray{
		rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"node.k8s.io"}), Resources: pulumi.ToStringArray([]string{"runtimeclasses"}),
			ResourceNames: pulumi.ToStringArray([]string{contract.RuntimeClassName}), Verbs: pulumi.ToStringArray([]string{"get"})},
		rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"apiextensions.k8s.io"}), Resources: pulumi.ToStringArray([]string{"customresourcedefinitions"}),
			ResourceNames: pulumi.ToStringArray(crds), Verbs: pulumi.ToStringArray([]string{"get"})},
		rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{""}), Resources: pulumi.ToStringArray([]string{"namespaces"}),
			ResourceNames: pulumi.ToStringArray([]string{namespace, contract.KedaNamespace}), Verbs: pulumi.ToStringArray([]string{"get"})},
	}
}

// sandboxNodesPreviewRules: get on the stack's NodeClass and NodePool, by name.
var sandboxNodesPreviewRules = rbacv1.PolicyRuleArray{
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"eks.amazonaws.com"}), Resources: pulumi.ToStringArray([]string{"nodeclasses"}),
		ResourceNames: pulumi.ToStringArray([]string{contract.SandboxNodeClassName}), Verbs: pulumi.ToStringArray([]string{"get"})},
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"karpenter.sh"}), Resources: pulumi.ToStringArray([]string{"nodepools"}),
		ResourceNames: pulumi.ToStringArray([]string{contract.SandboxNodePoolName}), Verbs: pulumi.ToStringArray([]string{"get"})},
}

// namespacedPreviewRules: get on the kinds the stack manages in its namespace, for
// `pulumi preview --refresh`. No Secrets, no writes.
var namespacedPreviewRules = rbacv1.PolicyRuleArray{
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{""}), Resources: pulumi.ToStringArray([]string{"configmaps", "serviceaccounts", "services"}), Verbs: pulumi.ToStringArray([]string{"get"})},
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"apps"}), Resources: pulumi.ToStringArray([]string{"deployments"}), Verbs: pulumi.ToStringArray([]string{"get"})},
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"rbac.authorization.k8s.io"}), Resources: pulumi.ToStringArray([]string{"rolebindings", "roles"}), Verbs: pulumi.ToStringArray([]string{"get"})},
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"extensions.agents.x-k8s.io"}), Resources: pulumi.ToStringArray([]string{"sandboxtemplates", "sandboxwarmpools"}), Verbs: pulumi.ToStringArray([]string{"get"})},
	rbacv1.PolicyRuleArgs{ApiGroups: pulumi.ToStringArray([]string{"keda.sh"}), Resources: pulumi.ToStringArray([]string{"scaledobjects"}), Verbs: pulumi.ToStringArray([]string{"get"})},
}

// NewPreviewAccess binds PreviewGroup to a ClusterRole (the cluster-scoped reads) and a Role in the
// stack's namespace. EKS's AmazonEKSViewPolicy is not enough (it has no RuntimeClass, CRD or custom
// resource) and AmazonEKSAdminViewPolicy reads Secrets, so the access entry carries the group instead.
func NewPreviewAccess(ctx *pulumi.Context, name string, args *PreviewAccessArgs, opts ...pulumi.ResourceOption) (*PreviewAccess, error) {
	p := &PreviewAccess{}
	if err := ctx.RegisterComponentResource("warmpool:index:PreviewAccess", name, p, opts...); err != nil {
		return nil, err
	}
	child := pulumi.Parent(p)
	group := rbacv1.SubjectArray{rbacv1.SubjectArgs{Kind: pulumi.String("Group"), Name: pulumi.String(PreviewGroup), ApiGroup: pulumi.String("rbac.authorization.k8s.io")}}
	labels := pulumi.StringMap{contract.PartOfLabel: pulumi.String(contract.ManagedByValue)}
	// Cluster-scoped, so named after the namespace: two stacks on one cluster keep theirs apart.
	clusterName := args.NamespaceName + "-preview"

	rules := PreviewRules(args.NamespaceName)
	if args.SandboxNodes {
		rules = append(rules, sandboxNodesPreviewRules...)
	}
	cr, err := rbacv1.NewClusterRole(ctx, name, &rbacv1.ClusterRoleArgs{
		Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String(clusterName), Labels: labels},
		Rules:    rules,
	}, child)
	if err != nil {
		return nil, err
	}
	if _, err := rbacv1.NewClusterRoleBinding(ctx, name, &rbacv1.ClusterRoleBindingArgs{
		Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String(clusterName), Labels: labels},
		RoleRef:  rbacv1.RoleRefArgs{ApiGroup: pulumi.String("rbac.authorization.k8s.io"), Kind: pulumi.String("ClusterRole"), Name: cr.Metadata.Name().Elem()},
		Subjects: group,
	}, child); err != nil {
		return nil, err
	}
	inNamespace := pulumi.DependsOn(args.DependsOn)
	role, err := rbacv1.NewRole(ctx, name, &rbacv1.RoleArgs{
		Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String("preview"), Namespace: args.Namespace, Labels: labels},
		Rules:    namespacedPreviewRules,
	}, child, inNamespace)
	if err != nil {
		return nil, err
	}
	if _, err := rbacv1.NewRoleBinding(ctx, name, &rbacv1.RoleBindingArgs{
		Metadata: &metav1.ObjectMetaArgs{Name: pulumi.String("preview"), Namespace: args.Namespace, Labels: labels},
		RoleRef:  rbacv1.RoleRefArgs{ApiGroup: pulumi.String("rbac.authorization.k8s.io"), Kind: pulumi.String("Role"), Name: role.Metadata.Name().Elem()},
		Subjects: group,
	}, child, inNamespace); err != nil {
		return nil, err
	}
	p.ClusterRole, p.Role = cr, role
	return p, ctx.RegisterResourceOutputs(p, pulumi.Map{})
}
