package plane

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// NodesReady reads whether the named nodes (every node when none is named)
// are Ready; a failed read or a node not Ready yet is the error a timed-out
// wait reports.
func (pl *Plane) NodesReady(names ...string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		nodes, err := pl.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := map[string]bool{}
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready[n.Name] = true
				}
			}
			if len(names) == 0 && !ready[n.Name] {
				return false, fmt.Errorf("node %s is not Ready yet", n.Name)
			}
		}
		if len(nodes.Items) == 0 {
			return false, errors.New("no Node objects yet")
		}
		for _, name := range names {
			if !ready[name] {
				return false, fmt.Errorf("node %s is not Ready yet (or not registered)", name)
			}
		}
		return true, nil
	}
}

// WaitFor polls cond, saying what it waits for, and fails with that
// description when the timeout passes. A process of the control plane that
// exits while waiting fails the wait at once.
func (pl *Plane) WaitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	pl.Say("waiting up to %s for %s", timeout, what)
	start := time.Now()
	err := poll.Until(ctx, timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if ok, dead := pl.Procs.Running(); !ok {
			return false, poll.Stop(pl.Procs.ExitedError(dead[0]))
		}
		return cond(ctx)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	pl.Say("%s: done in %s", what, time.Since(start).Round(10*time.Millisecond))
	return nil
}
