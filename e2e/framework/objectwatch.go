package framework

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Observed is one value read from an object at the time the watch delivered it.
type Observed[T any] struct {
	At    time.Time
	Value T
}

// ObjectWatch records what a watch reports, from the API server's own record: a poll would miss
// a value written and overwritten between two reads. It reconnects from the last resource
// version when the watch ends (an API server restart), and from scratch when that is too old.
type ObjectWatch[T any] struct {
	mu   sync.Mutex
	seen []Observed[T]
	err  error
}

// WatchObjects watches res (fieldSelector may be empty) until ctx ends, recording read(event).
// read returns false for an event it does not record.
func WatchObjects[T any](ctx context.Context, res dynamic.ResourceInterface, fieldSelector string, read func(watch.EventType, *unstructured.Unstructured) (T, bool)) *ObjectWatch[T] {
	w := &ObjectWatch[T]{}
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
					w.seen = append(w.seen, Observed[T]{time.Now(), v})
					w.mu.Unlock()
				}
			}
			wi.Stop()
		}
	}()
	return w
}

func (w *ObjectWatch[T]) setErr(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

func (w *ObjectWatch[T]) LastErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Since returns the values seen from t on, after the last value seen before t (the one in force
// at t, stamped t).
func (w *ObjectWatch[T]) Since(t time.Time) []Observed[T] {
	w.mu.Lock()
	defer w.mu.Unlock()
	return valuesSince(w.seen, t)
}

func valuesSince[T any](seen []Observed[T], t time.Time) []Observed[T] {
	var out []Observed[T]
	for i, s := range seen {
		if !s.At.Before(t) {
			if len(out) == 0 && i > 0 {
				out = append(out, Observed[T]{t, seen[i-1].Value})
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(seen) > 0 {
		out = append(out, Observed[T]{t, seen[len(seen)-1].Value})
	}
	return out
}

// BelowFloor prints the values seen (value@+seconds from t0) and counts those below floor: a
// spec.replicas under what the held claims map to is a spurious scale-down.
func BelowFloor(seen []Observed[int64], t0 time.Time, floor int64) ([]string, int) {
	var values []string
	spurious := 0
	for _, s := range seen {
		values = append(values, fmt.Sprintf("%d@+%.0fs", s.Value, s.At.Sub(t0).Seconds()))
		if s.Value < floor {
			spurious++
		}
	}
	return values, spurious
}

// SpecReplicasOf reads a pool's spec.replicas from an added or modified event.
func SpecReplicasOf(typ watch.EventType, u *unstructured.Unstructured) (int64, bool) {
	if typ != watch.Added && typ != watch.Modified {
		return 0, false
	}
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return n, found && err == nil
}

// ClaimState is one claim as a watch event showed it.
type ClaimState struct {
	Name    string
	Ready   bool
	Deleted bool
}

// ClaimReady reports whether the claim's Ready condition is True.
func ClaimReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// ClaimStateOf reads a claim's state from a watch event.
func ClaimStateOf(typ watch.EventType, u *unstructured.Unstructured) (ClaimState, bool) {
	switch typ {
	case watch.Added, watch.Modified:
		return ClaimState{Name: u.GetName(), Ready: ClaimReady(u)}, true
	case watch.Deleted:
		return ClaimState{Name: u.GetName(), Deleted: true}, true
	}
	return ClaimState{}, false
}

// FirstReady is when the events first show the claim Ready at or after t.
func FirstReady(events []Observed[ClaimState], name string, t time.Time) (time.Time, bool) {
	for _, e := range events {
		if e.Value.Name == name && e.Value.Ready && !e.At.Before(t) {
			return e.At, true
		}
	}
	return time.Time{}, false
}

// ClaimDeleted reports whether the events delete the claim.
func ClaimDeleted(events []Observed[ClaimState], name string) bool {
	for _, e := range events {
		if e.Value.Name == name && e.Value.Deleted {
			return true
		}
	}
	return false
}

// NotReadyFor sums the time in [from, to) the claim spent not Ready, from its events: the state
// in force at from is the claim's last event before it. A claim with no event before from is
// taken as Ready until its first event (the fault runs start with the held claims Ready).
func NotReadyFor(events []Observed[ClaimState], name string, from, to time.Time) time.Duration {
	var total time.Duration
	ready, since := true, from
	for _, e := range events {
		if e.Value.Name != name {
			continue
		}
		at := e.At
		if at.Before(from) {
			at = from
		}
		if !ready {
			total += at.Sub(since)
		}
		ready, since = e.Value.Ready && !e.Value.Deleted, at
	}
	if !ready && to.After(since) {
		total += to.Sub(since)
	}
	return total
}

// FallbackRecord is KEDA's Fallback condition on the stack's ScaledObject, read every second
// (KEDA writes it on a status update, which a watch would show too; a poll is enough at the
// 15 s threshold it reports on).
type FallbackRecord struct{ ObjectWatch[bool] }

// PollFallback reads the Fallback condition of the ScaledObject name in so every second until ctx
// ends, recording each change.
func PollFallback(ctx context.Context, so dynamic.ResourceInterface, name string) *FallbackRecord {
	r := &FallbackRecord{}
	go func() {
		for ctx.Err() == nil {
			u, err := so.Get(ctx, name, metav1.GetOptions{})
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
				if n := len(r.seen); n == 0 || r.seen[n-1].Value != active {
					r.seen = append(r.seen, Observed[bool]{time.Now(), active})
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

// Spans prints when the Fallback condition was True, in seconds after t0 ("never" when it was
// not read True once).
func (r *FallbackRecord) Spans(t0 time.Time) string {
	var parts []string
	var on *time.Time
	for _, s := range r.Since(t0) {
		switch {
		case s.Value && on == nil:
			at := s.At
			on = &at
		case !s.Value && on != nil:
			parts = append(parts, fmt.Sprintf("+%.0f s to +%.0f s", on.Sub(t0).Seconds(), s.At.Sub(t0).Seconds()))
			on = nil
		}
	}
	if on != nil {
		parts = append(parts, fmt.Sprintf("from +%.0f s", on.Sub(t0).Seconds()))
	}
	if len(parts) == 0 {
		if err := r.LastErr(); err != nil {
			return fmt.Sprintf("never (a read failed: %v)", err)
		}
		return "never"
	}
	return strings.Join(parts, ", ")
}

// SumMetric sums the samples of one metric in Prometheus text format whose labels contain every
// one of labels; a counter with no sample yet (no error since the operator started) is 0.
func SumMetric(s *bufio.Scanner, name string, labels ...string) (float64, error) {
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
