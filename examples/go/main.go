// Command go is a team's own Go stack using the warmpool package (teamstack).
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/examples/go/teamstack"
)

func main() { pulumi.Run(teamstack.Run) }
