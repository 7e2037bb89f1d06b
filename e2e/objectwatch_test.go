package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract/gvr"
)

// observed is one value read from an object at the time the watch delivered it.
type observed[T any] struct {
	at    time.Time
	value T
}

// objectWatch records what a watch reports, from the API server's own record: a poll would miss
// a value written and overwritten between two reads. It reconnects from the last resource
// version when the watch ends (an API server restart), and from scratch when that is too old.
type objectWatch[T any] struct {
	mu   sync.Mutex
	seen []observed[T]
	err  error
}

// watchObjects watches res (fieldSelector may be empty) until ctx ends, recording read(event).
// read returns false for an event it does not record.
func watchObjects[T any](ctx context.Context, res dynamic.ResourceInterface, fieldSelector string, read func(watch.EventType, *unstructured.Unstructured) (T, bool)) *objectWatch[T] {
	w := &objectWatch[T]{}
	go func() {
		rv := ""
		for ctx.Err() == nil {
			wi, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: fieldSelector, ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				w.setErr(err)
				time.Sleep(time.Second)
				continue
			}
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Error {
					w.setErr(fmt.Errorf("watch error: %v", ev.Object))
					rv = "" // too old (410 Gone): list again
					break
				}
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = u.GetResourceVersion()
				if v, ok := read(ev.Type, u); ok {
					w.mu.Lock()
					w.seen = append(w.seen, observed[T]{time.Now(), v})
					w.mu.Unlock()
				}
			}
			wi.Stop()
		}
	}()
	return w
}

func (w *objectWatch[T]) setErr(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

func (w *objectWatch[T]) lastErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// since returns the values seen from t on, after the last value seen before t (the one in force
// at t, stamped t).
func (w *objectWatch[T]) since(t time.Time) []observed[T] {
	w.mu.Lock()
	defer w.mu.Unlock()
	return valuesSince(w.seen, t)
}

func valuesSince[T any](seen []observed[T], t time.Time) []observed[T] {
	var out []observed[T]
	for i, s := range seen {
		if !s.at.Before(t) {
			if len(out) == 0 && i > 0 {
				out = append(out, observed[T]{t, seen[i-1].value})
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(seen) > 0 {
		out = append(out, observed[T]{t, seen[len(seen)-1].value})
	}
	return out
}

// specReplicasOf reads a pool's spec.replicas from an added or modified event.
func specReplicasOf(typ watch.EventType, u *unstructured.Unstructured) (int64, bool) {
	if typ != watch.Added && typ != watch.Modified {
		return 0, false
	}
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n, found && err == nil
}

// claimState is one claim as a watch event showed it.
type claimState struct {
	name    string
	ready   bool
	deleted bool
}

func claimStateOf(typ watch.EventType, u *unstructured.Unstructured) (claimState, bool) {
	switch typ {
	case watch.Added, watch.Modified:
		return claimState{name: u.GetName(), ready: claimReady(u)}, true
	case watch.Deleted:
		return claimState{name: u.GetName(), deleted: true}, true
	}
	return claimState{}, false
}

// firstReady is when the events first show the claim Ready at or after t.
func firstReady(events []observed[claimState], name string, t time.Time) (time.Time, bool) {
	for _, e := range events {
		if e.value.name == name && e.value.ready && !e.at.Before(t) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// claimDeleted reports whether the events delete the claim.
func claimDeleted(events []observed[claimState], name string) bool {
	for _, e := range events {
		if e.value.name == name && e.value.deleted {
			return true
		}
	}
	return false
}

// notReadyFor sums the time in [from, to) the claim spent not Ready, from its events: the state
// in force at from is the claim's last event before it. A claim with no event before from is
// taken as Ready until its first event (the fault runs start with the held claims Ready).
func notReadyFor(events []observed[claimState], name string, from, to time.Time) time.Duration {
	var total time.Duration
	ready, since := true, from
	for _, e := range events {
		if e.value.name != name {
			continue
		}
		at := e.at
		if at.Before(from) {
			at = from
		}
		if !ready {
			total += at.Sub(since)
		}
		ready, since = e.value.ready && !e.value.deleted, at
	}
	if !ready && to.After(since) {
		total += to.Sub(since)
	}
	return total
}

// fallbackRecord is KEDA's Fallback condition on the stack's ScaledObject, read every second
// (KEDA writes it on a status update, which a watch would show too; a poll is enough at the
// 15 s threshold it reports on).
type fallbackRecord struct{ objectWatch[bool] }

func (e *stackRun) pollFallback(ctx context.Context) *fallbackRecord {
	r := &fallbackRecord{}
	so := e.cluster.Dynamic.Resource(gvr.ScaledObject).Namespace(e.ns)
	go func() {
		for ctx.Err() == nil {
			u, err := so.Get(ctx, contract.ScaledObjectName, metav1.GetOptions{})
			if err != nil {
				r.setErr(err)
			} else {
				active := false
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range conds {
					if m, ok := c.(map[string]any); ok && m["type"] == "Fallback" {
						active = m["status"] == "True"
					}
				}
				r.mu.Lock()
				if n := len(r.seen); n == 0 || r.seen[n-1].value != active {
					r.seen = append(r.seen, observed[bool]{time.Now(), active})
				}
				r.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return r
}

// spans prints when the Fallback condition was True, in seconds after t0 ("never" when it was
// not read True once).
func (r *fallbackRecord) spans(t0 time.Time) string {
	var parts []string
	var on *time.Time
	for _, s := range r.since(t0) {
		switch {
		case s.value && on == nil:
			at := s.at
			on = &at
		case !s.value && on != nil:
			parts = append(parts, fmt.Sprintf("+%.0f s to +%.0f s", on.Sub(t0).Seconds(), s.at.Sub(t0).Seconds()))
			on = nil
		}
	}
	if on != nil {
		parts = append(parts, fmt.Sprintf("from +%.0f s", on.Sub(t0).Seconds()))
	}
	if len(parts) == 0 {
		if err := r.lastErr(); err != nil {
			return fmt.Sprintf("never (a read failed: %v)", err)
		}
		return "never"
	}
	return strings.Join(parts, ", ")
}

// scalerErrors reads KEDA's operator metrics and sums keda_scaler_detail_errors_total over the
// stack's ScaledObject: what the README tells a platform team to alert on.
func (e *stackRun) scalerErrors(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.cluster.KEDAOperatorMetricsURL(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("KEDA's metrics answered %s", resp.Status)
	}
	return sumMetric(bufio.NewScanner(resp.Body), "keda_scaler_detail_errors_total", `namespace="`+e.ns+`"`, `scaledObject="`+contract.ScaledObjectName+`"`)
}

// sumMetric sums the samples of one metric in Prometheus text format whose labels contain every
// one of labels; a counter with no sample yet (no error since the operator started) is 0.
func sumMetric(s *bufio.Scanner, name string, labels ...string) (float64, error) {
	total := 0.0
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(line[:end], l) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(line[end+1:])[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", line, err)
		}
		total += v
	}
	return total, s.Err()
}
