package program

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// Cloud makes what the program's own cluster is outside Kubernetes: the cluster itself (or the
// connection to an existing one), the sandboxes' nodes with their tagging policy, and the ECR
// repository of the exporter's image. awscomponents.AWS is the one Run is given (awsprogram.Run);
// it is an interface so that this package, which the plugin builds, never imports the AWS and EKS
// SDKs.
type Cloud interface {
	NewCluster(ctx *pulumi.Context, name string, args *components.ClusterArgs, opts ...pulumi.ResourceOption) (*components.Cluster, error)
	NewSandboxNodes(ctx *pulumi.Context, name string, args *components.SandboxNodesArgs, opts ...pulumi.ResourceOption) (*components.SandboxNodes, error)
	NewECRExporterImage(ctx *pulumi.Context, name string, args *components.ExporterImageArgs, opts ...pulumi.ResourceOption) (*components.ExporterImage, error)
}
