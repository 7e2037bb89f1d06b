// Command warm-pool-autoscaling-keda is the Pulumi program (package awsprogram): a pool of pre-booted,
// VM-isolated sandboxes on EKS Auto Mode whose size follows SandboxClaim demand through KEDA.
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/awsprogram"
)

func main() { pulumi.Run(awsprogram.Run) }
