package awscomponents

import (
	"strings"

	awseks "github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-eks/sdk/v3/go/eks"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// accessEntries are the EKS access entries created with the cluster: each admin with
// AmazonEKSClusterAdminPolicy at cluster scope; the preview principal with no access policy, only
// the Kubernetes group PreviewGroup, which the stack's RBAC allows to read what a preview reads.
// Each carries the stack's tags.
func accessEntries(admins []string, preview string, tags map[string]string) map[string]eks.AccessEntryArgs {
	entries := map[string]eks.AccessEntryArgs{}
	for _, arn := range admins {
		partition := strings.SplitN(arn, ":", 3)[1]
		entries[components.AccessEntryKey("admin", arn)] = eks.AccessEntryArgs{
			PrincipalArn: pulumi.String(arn),
			Tags:         pulumi.ToStringMap(tags),
			AccessPolicies: map[string]eks.AccessPolicyAssociationInput{
				"cluster-admin": eks.AccessPolicyAssociationArgs{
					PolicyArn:   pulumi.Sprintf("arn:%s:eks::aws:cluster-access-policy/%s", partition, components.ClusterAdminPolicy),
					AccessScope: awseks.AccessPolicyAssociationAccessScopeArgs{Type: pulumi.String("cluster")},
				},
			},
		}
	}
	if preview != "" {
		entries[components.AccessEntryKey("preview", preview)] = eks.AccessEntryArgs{
			PrincipalArn:     pulumi.String(preview),
			KubernetesGroups: pulumi.ToStringArray([]string{components.PreviewGroup}),
			Tags:             pulumi.ToStringMap(tags),
		}
	}
	return entries
}
