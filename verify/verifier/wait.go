package verifier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// Every wait of verify is a poll.Wait: a read that fails (the API server or the exporter
// answering an error) is retried until the wait's deadline, never taken as a value and never
// the end of the wait, and a wait that times out says what it last read and what the last
// failed read said. A wait says what it waits for when it first finds it not done, then that it
// is still waiting every progressEvery.

// printer is where waits say what they wait for: the report, or one pool's slice of it.
type printer interface {
	Printf(format string, args ...any)
}

// progressEvery is how often a long wait says it is still waiting.
var progressEvery = 15 * time.Second

// errTimeout marks a wait that ran out of time (as opposed to an interrupt or a read that
// ended it), so callers can word the evidence accordingly.
var errTimeout = errors.New("timed out")

// objCond judges one reading of an object: done, and a short description of
// the current value for progress lines ("2"). An error is a failed read.
type objCond func(u *unstructured.Unstructured) (done bool, now string, err error)

// waitObject waits until the named object satisfies cond. It watches the
// object so the moment cond became true is the moment the event arrived, and
// polls as a fallback (a watch can be refused or closed). It returns the
// satisfying object (else the last one read) and the time it was seen.
func waitObject(ctx context.Context, rep printer, ri dynamic.ResourceInterface, name, what string,
	timeout, interval time.Duration, cond objCond) (*unstructured.Unstructured, time.Time, error) {
	w, werr := watchName(ctx, ri, name)
	if werr != nil {
		rep.Printf("  (watch unavailable: %v; polling every %s)", werr, interval)
	}
	return waitWatched(ctx, rep, ri, w, name, what, timeout, interval, cond)
}

// watchName starts a watch on one object by name; callers that must not miss
// an event (the adoption) start it before they change anything. The watch
// outlives the call: the caller stops it (waitWatched does).
func watchName(ctx context.Context, ri dynamic.ResourceInterface, name string) (watch.Interface, error) {
	return ri.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
}

// objEvent is one watch event, stamped when it arrived.
type objEvent struct {
	ev watch.Event
	at time.Time
}

// watchQueue holds a watch's events for the wait's reads, in arrival order, and wakes the
// wait when one arrives.
type watchQueue struct {
	mu     sync.Mutex
	events []objEvent
	wake   chan struct{}
}

// startQueue drains w into a queue until w ends or done closes (nil w: an empty queue).
func startQueue(w watch.Interface, done <-chan struct{}) *watchQueue {
	q := &watchQueue{wake: make(chan struct{}, 1)}
	if w == nil {
		return q
	}
	go func() {
		for {
			select {
			case <-done:
				return
			case ev, open := <-w.ResultChan():
				if !open {
					return // the reads go on polling
				}
				q.mu.Lock()
				q.events = append(q.events, objEvent{ev, time.Now()})
				q.mu.Unlock()
				select {
				case q.wake <- struct{}{}:
				default:
				}
				if ev.Type == watch.Error {
					return
				}
			}
		}
	}()
	return q
}

func (q *watchQueue) take() []objEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs := q.events
	q.events = nil
	return evs
}

// waitWatched is waitObject over an already started watch (nil: poll only). An event wakes
// the wait at once; each read judges the watch's events that arrived since the read before, in
// order, and GETs the object when there were none. The object's deletion ends the wait.
func waitWatched(ctx context.Context, rep printer, ri dynamic.ResourceInterface, w watch.Interface, name, what string,
	timeout, interval time.Duration, cond objCond) (*unstructured.Unstructured, time.Time, error) {
	done := make(chan struct{})
	defer close(done)
	if w != nil {
		defer w.Stop()
	}
	q := startQueue(w, done)

	var u *unstructured.Unstructured // the last object read
	var at time.Time                 // when cond was first seen true
	now := ""
	judge := func(o *unstructured.Unstructured, seen time.Time) (bool, error) {
		u = o
		d, n, err := cond(o)
		if err != nil {
			return false, err
		}
		now = n
		if d {
			at = seen
		}
		return d, nil
	}
	_, err := waitOn(ctx, rep, what, timeout, interval, q.wake, &now, func(ctx context.Context) (bool, error) {
		evented := false
		for _, e := range q.take() {
			o, ok := e.ev.Object.(*unstructured.Unstructured)
			if !ok || o.GetName() != name {
				continue
			}
			switch e.ev.Type {
			case watch.Added, watch.Modified:
				evented = true
				if d, err := judge(o, e.at); err != nil || d {
					return d, err
				}
			case watch.Deleted:
				return false, poll.Stop(fmt.Errorf("%s was deleted while waiting for %s", name, what))
			}
		}
		if evented {
			return false, nil // the events were this read
		}
		o, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", name, err)
		}
		return judge(o, time.Now())
	})
	if err != nil {
		return u, time.Time{}, err
	}
	return u, at, nil
}

// pollFunc reads something once: done, and a description of the value read for progress
// lines and the evidence. An error is a failed read: it is retried, and reported if the wait
// times out; poll.Stop(err) ends the wait at once.
type pollFunc func(ctx context.Context) (done bool, now string, err error)

// pollUntil polls fn until it is done, printing what it waits for. It returns the last value
// read.
func pollUntil(ctx context.Context, rep printer, what string, timeout, interval time.Duration, fn pollFunc) (string, error) {
	now := ""
	return waitOn(ctx, rep, what, timeout, interval, nil, &now, func(ctx context.Context) (bool, error) {
		d, n, err := fn(ctx)
		if err != nil {
			return false, err
		}
		now = n
		return d, nil
	})
}

// waitOn is verify's poll.Wait: read until done, saying what it waits for (now: the last value
// read, kept by read), and worded as evidence when it ends otherwise.
func waitOn(ctx context.Context, rep printer, what string, timeout, interval time.Duration, wake <-chan struct{}, now *string,
	read func(context.Context) (bool, error)) (string, error) {
	first := true
	err := poll.Wait{Timeout: timeout, Interval: interval, Wake: wake, Every: progressEvery,
		Progress: func(s poll.Status) {
			state := valueRead(*now)
			if s.Err != nil {
				state += "; the latest read failed: " + s.Err.Error()
			}
			if first {
				first = false
				rep.Printf("waiting up to %s for %s (%s)", timeout, what, state)
				return
			}
			rep.Printf("  still waiting for %s (%s, %s elapsed)", what, state, s.Waited.Round(time.Second))
		}}.Until(ctx, read)
	return *now, waitError(ctx, err, what, timeout, *now)
}

func valueRead(now string) string {
	if now == "" {
		return "nothing read yet"
	}
	return "now " + now
}

// waitError words a wait's end as evidence: an interrupt is ctx's error; a timeout says what
// was last read and, if reads failed, how many and the last failed read's error (wrapped, with
// errTimeout). Any other error (a poll.Stop) is returned as it is.
func waitError(ctx context.Context, err error, what string, timeout time.Duration, now string) error {
	var nr *poll.NotReached
	if !errors.As(err, &nr) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if nr.LastErr == nil {
		return fmt.Errorf("%w after %s waiting for %s (last read: %s)", errTimeout, timeout, what, now)
	}
	last := "last value read: " + now
	if now == "" {
		last = "no read succeeded"
	}
	return fmt.Errorf("%w after %s waiting for %s (%s; %d of %d reads failed, the last read error: %w)",
		errTimeout, timeout, what, last, nr.Failed, nr.Reads, nr.LastErr)
}
