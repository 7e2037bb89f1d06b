// Command advise replays a team's own claim history in the replay model against the warm-pool
// settings the program can render, and prints the setting to run. See README.md; the work is
// package advisor's.
package main

import (
	"os"

	"warmpool.local/warm-pool-autoscaling-keda/advise/advisor"
)

func main() {
	os.Exit(advisor.Main(os.Args[1:], os.Stdout, os.Stderr))
}
