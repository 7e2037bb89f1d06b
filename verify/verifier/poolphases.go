package verifier

import (
	"context"
	"fmt"
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// runPoolPhases runs each pool's phases. Every pool of a stack has a namespace of its own (the
// program refuses two pools in one), so their claims, ScaledObjects and HPAs are apart and
// their phases run side by side: a stack of n pools takes about as long as its slowest pool,
// not the sum. Whether one pool's demand moves another is the cross-pool control's question;
// it runs afterwards, one driven pool at a time. The first pool prints as it goes; each later
// pool's lines are held, printed whole once the pools before it are done, and from then on
// as they come. --pools-in-turn, or two pools in one namespace, runs them one after another.
func runPoolPhases(ctx context.Context, cfg Config, runners []*Runner, rep *report.Report) {
	if len(runners) < 2 || cfg.PoolsInTurn || !ownNamespaces(runners) {
		for _, r := range runners {
			if ctx.Err() != nil {
				break
			}
			r.Run(ctx)
		}
		return
	}
	var names []string
	for _, r := range runners {
		names = append(names, r.cfg.Pool)
	}
	rep.Printf("the pools' phases run side by side (each pool has its own namespace): %s; each pool's lines print whole once the pools before it are done (--pools-in-turn runs them one after another)", strings.Join(names, ", "))
	done := make([]chan struct{}, len(runners))
	panics := make([]any, len(runners))
	for i, r := range runners {
		done[i] = make(chan struct{})
		if i > 0 {
			r.rep.Hold()
		}
		go func() {
			defer close(done[i])
			// A panic is carried to the caller's goroutine, where the exit handler runs.
			defer func() { panics[i] = recover() }()
			r.Run(ctx)
		}()
	}
	for i := range runners {
		<-done[i]
		if i+1 < len(runners) {
			runners[i+1].rep.Release()
		}
	}
	for i, p := range panics {
		if p != nil {
			panic(fmt.Sprintf("pool %s's phases: %v", runners[i].cfg.Pool, p))
		}
	}
}

// ownNamespaces reports whether no two pools share a namespace (their claims' names would).
func ownNamespaces(runners []*Runner) bool {
	seen := map[string]bool{}
	for _, r := range runners {
		if seen[r.cfg.Namespace] {
			return false
		}
		seen[r.cfg.Namespace] = true
	}
	return true
}
