package localcluster

import (
	"context"
	"errors"
	"os"
	"time"
)

// Stop kills exactly the processes this control plane started and, for a
// temporary state directory, removes it.
func (c *Cluster) Stop() error {
	errs := c.teardown()
	if errs == nil && c.removeState {
		return os.RemoveAll(c.StateDir)
	}
	return errs
}

// teardown ends what the node kinds run beyond the process record, stops the
// processes, then undoes what the nodes did to the machine (last kind first).
func (c *Cluster) teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	for i := len(c.kinds) - 1; i >= 0; i-- {
		c.kinds[i].Stop(ctx)
	}
	cancel()
	errs := c.plane.Procs.Stop(10 * time.Second)
	if len(errs) == 0 {
		// After the processes: they hold what it removes.
		for i := len(c.kinds) - 1; i >= 0; i-- {
			if err := c.kinds[i].Cleanup(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		if err := c.plane.Procs.RemoveRecord(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveState deletes the state directory of a stopped control plane.
func (c *Cluster) RemoveState() error {
	if ok, _ := c.Running(); ok && len(c.plane.Procs.All()) > 0 {
		return errors.New("the control plane is still running")
	}
	return os.RemoveAll(c.StateDir)
}
