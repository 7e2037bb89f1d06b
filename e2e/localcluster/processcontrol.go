package localcluster

import (
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// Processes is the control plane's processes: another program started there
// (the demo's exporter) is logged under <state>/logs/<name>.log and stopped
// with the control plane, also by `localcluster down`.
func (c *Cluster) Processes() *process.Set { return c.plane.Procs }

// Kill stops the named process as a crash would: SIGKILL to its group, by the
// pid this cluster recorded for it (never by name). It returns once the
// process has exited.
func (c *Cluster) Kill(name string) error { return c.plane.Procs.Kill(name) }

// Restart starts a killed process again with the command that first started
// it (its binary, args and env), as its supervisor would, in its place in
// the stop order.
func (c *Cluster) Restart(name string) error { return c.plane.Procs.Restart(name) }

// Running reports whether every process of the control plane still runs, and
// names those that do not.
func (c *Cluster) Running() (bool, []string) { return c.plane.Procs.Running() }
