// Command verify proves on a live cluster that KEDA, and only KEDA, moves the
// SandboxWarmPool's spec.replicas with SandboxClaim demand. See README.md; the
// work is package verifier's.
package main

import (
	"os"

	"warmpool.local/warm-pool-autoscaling-keda/verify/verifier"
)

func main() {
	os.Exit(verifier.Main(os.Args[1:], os.Stdout, os.Stderr))
}
