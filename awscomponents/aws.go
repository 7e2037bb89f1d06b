// Package awscomponents is the components that make AWS resources: the EKS Auto Mode cluster with
// its network and access entries, the tagging policy of the sandboxes' nodes and the exporter
// image's ECR repository. They live apart from package components so that what only runs in a
// cluster (the package's plugin) builds without the AWS and EKS SDKs, the most of the program's
// compile.
package awscomponents

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// AWS is the program's cloud (program.Cloud): these components, on AWS.
type AWS struct{}

func (AWS) NewCluster(ctx *pulumi.Context, name string, args *components.ClusterArgs, opts ...pulumi.ResourceOption) (*components.Cluster, error) {
	return NewCluster(ctx, name, args, opts...)
}

func (AWS) NewSandboxNodes(ctx *pulumi.Context, name string, args *components.SandboxNodesArgs, opts ...pulumi.ResourceOption) (*components.SandboxNodes, error) {
	return NewSandboxNodes(ctx, name, args, opts...)
}

func (AWS) NewECRExporterImage(ctx *pulumi.Context, name string, args *components.ExporterImageArgs, opts ...pulumi.ResourceOption) (*components.ExporterImage, error) {
	return NewECRExporterImage(ctx, name, args, opts...)
}
