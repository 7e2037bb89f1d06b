package awscomponents

import (
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// The stack's own nodes for its sandboxes (create mode): what they are and how the NodePool is
// sized is components/sandboxnodes.go; here, what the cluster IAM role is allowed for them.

// nodeTaggingPolicy lets the cluster IAM role tag what Auto Mode launches for the cluster with
// the NodeClass's tags: the Compute, Storage and Networking statements of the EKS user guide's
// example ("Learn about identity and access in EKS Auto Mode", auto-learn-iam, "Custom AWS tags for
// EKS Auto resources": the managed policies "do not permit applying user defined tags"). Its
// LoadBalancer and Shield statements are left out: the stack makes no load balancer, and the
// NodeClass's tags do not reach one. Each statement holds only for requests tagged with this
// cluster's name, as the cluster role's own are.
const nodeTaggingPolicy = `{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Sid": "Compute",
      "Effect": "Allow",
      "Action": ["ec2:CreateFleet", "ec2:RunInstances", "ec2:CreateLaunchTemplate"],
      "Resource": "*",
      "Condition": {
        "StringEquals": {"aws:RequestTag/eks:eks-cluster-name": "${aws:PrincipalTag/eks:eks-cluster-name}"},
        "StringLike": {"aws:RequestTag/eks:kubernetes-node-class-name": "*", "aws:RequestTag/eks:kubernetes-node-pool-name": "*"}
      }
    },
    {
      "Sid": "Storage",
      "Effect": "Allow",
      "Action": ["ec2:CreateVolume", "ec2:CreateSnapshot"],
      "Resource": ["arn:aws:ec2:*:*:volume/*", "arn:aws:ec2:*:*:snapshot/*"],
      "Condition": {
        "StringEquals": {"aws:RequestTag/eks:eks-cluster-name": "${aws:PrincipalTag/eks:eks-cluster-name}"}
      }
    },
    {
      "Sid": "Networking",
      "Effect": "Allow",
      "Action": "ec2:CreateNetworkInterface",
      "Resource": "*",
      "Condition": {
        "StringEquals": {"aws:RequestTag/eks:eks-cluster-name": "${aws:PrincipalTag/eks:eks-cluster-name}"},
        "StringLike": {"aws:RequestTag/eks:kubernetes-cni-node-name": "*"}
      }
    }
  ]
}`

// NodeTaggingPolicy is the policy document the cluster IAM role gets.
func NodeTaggingPolicy() string { return nodeTaggingPolicy }

// NewSandboxNodes makes the tagging policy, then the NodeClass, then the NodePool.
func NewSandboxNodes(ctx *pulumi.Context, name string, args *components.SandboxNodesArgs, opts ...pulumi.ResourceOption) (*components.SandboxNodes, error) {
	if err := components.CheckSandboxNodes(name, args); err != nil {
		return nil, err
	}
	n := &components.SandboxNodes{}
	if err := ctx.RegisterComponentResource(components.SandboxNodesType, name, n, opts...); err != nil {
		return nil, err
	}
	policy, err := iam.NewRolePolicy(ctx, name+"-tagging", &iam.RolePolicyArgs{
		Role:   args.ClusterRoleName,
		Policy: pulumi.String(nodeTaggingPolicy),
	}, pulumi.Parent(n))
	if err != nil {
		return nil, err
	}
	n.TaggingPolicy = policy
	return components.AddNodeClassAndPool(ctx, n, args)
}
