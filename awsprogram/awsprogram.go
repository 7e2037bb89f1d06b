// Package awsprogram is the Pulumi program as `pulumi up` runs it: package program on AWS, its
// cluster and what only that cluster has made by package awscomponents. It is a package of its
// own so that package program, which the plugin builds, stays clear of the AWS and EKS SDKs.
package awsprogram

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/awscomponents"
	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// Run is the whole stack: main runs it under the Pulumi CLI, the e2e inline through the Automation API.
func Run(ctx *pulumi.Context) error { return program.Run(ctx, awscomponents.AWS{}) }
