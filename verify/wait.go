package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// printer is where waits say what they wait for: the report, or one pool's slice of it.
type printer interface {
	Printf(format string, args ...any)
}

// progressEvery is how often a long wait says it is still waiting.
var progressEvery = 15 * time.Second

// errTimeout marks a wait that ran out of time (as opposed to a failed read or
// an interrupt), so callers can word the evidence accordingly.
var errTimeout = errors.New("timed out")

// objCond judges one reading of an object: done, and a short description of
// the current value for progress lines ("2").
type objCond func(u *unstructured.Unstructured) (done bool, now string, err error)

// waitObject waits until the named object satisfies cond. It watches the
// object so the moment cond became true is the moment the event arrived, and
// polls as a fallback (a watch can be refused or closed). A failed read ends
// the wait with an error: it is never taken as a value. It returns the
// satisfying object and the time it was seen.
func waitObject(ctx context.Context, rep printer, ri dynamic.ResourceInterface, name, what string,
	timeout, poll time.Duration, cond objCond) (*unstructured.Unstructured, time.Time, error) {
	w, werr := watchName(ctx, ri, name)
	if werr != nil {
		rep.Printf("  (watch unavailable: %v; polling every %s)", werr, poll)
	}
	return waitWatched(ctx, rep, ri, w, name, what, timeout, poll, cond)
}

// watchName starts a watch on one object by name; callers that must not miss
// an event (the adoption) start it before they change anything. The watch
// outlives the call: the caller stops it (waitWatched does).
func watchName(ctx context.Context, ri dynamic.ResourceInterface, name string) (watch.Interface, error) {
	return ri.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
}

// waitWatched is waitObject over an already started watch (nil: poll only).
func waitWatched(ctx context.Context, rep printer, ri dynamic.ResourceInterface, w watch.Interface, name, what string,
	timeout, poll time.Duration, cond objCond) (*unstructured.Unstructured, time.Time, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var events <-chan watch.Event
	if w != nil {
		defer w.Stop()
		events = w.ResultChan()
	}

	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading %s: %w", name, err)
	}
	done, now, err := cond(u)
	if err != nil {
		return u, time.Time{}, err
	}
	if done {
		return u, time.Now(), nil
	}
	rep.Printf("waiting up to %s for %s (now %s)", timeout, what, now)

	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return u, time.Time{}, parent.Err()
			}
			return u, time.Time{}, fmt.Errorf("%w after %s waiting for %s (last read: %s)", errTimeout, timeout, what, now)
		case ev, open := <-events:
			if !open {
				events = nil // fall back to polling
				continue
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				eu, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || eu.GetName() != name {
					continue
				}
				at := time.Now()
				u = eu
				if done, now, err = cond(u); err != nil {
					return u, time.Time{}, err
				} else if done {
					return u, at, nil
				}
			case watch.Deleted:
				if eu, ok := ev.Object.(*unstructured.Unstructured); ok && eu.GetName() == name {
					return u, time.Time{}, fmt.Errorf("%s was deleted while waiting for %s", name, what)
				}
			case watch.Error:
				events = nil
			}
		case <-ticker.C:
			gu, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				if parent.Err() != nil {
					return u, time.Time{}, parent.Err()
				}
				if ctx.Err() != nil {
					return u, time.Time{}, fmt.Errorf("%w after %s waiting for %s (last read: %s)", errTimeout, timeout, what, now)
				}
				return u, time.Time{}, fmt.Errorf("reading %s: %w", name, err)
			}
			at := time.Now()
			u = gu
			if done, now, err = cond(u); err != nil {
				return u, time.Time{}, err
			} else if done {
				return u, at, nil
			}
		case <-progress.C:
			rep.Printf("  still waiting for %s (now %s, %s elapsed)", what, now, time.Since(start).Round(time.Second))
		}
	}
}

// pollFunc reads something once: done, a description of the current value,
// and an error that ends the wait (a failed read is not a value).
type pollFunc func(ctx context.Context) (done bool, now string, err error)

// pollUntil polls fn until it is done, printing what it waits for.
func pollUntil(ctx context.Context, rep printer, what string, timeout, poll time.Duration, fn pollFunc) (string, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done, now, err := fn(ctx)
	if err != nil || done {
		return now, err
	}
	rep.Printf("waiting up to %s for %s (now %s)", timeout, what, now)
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return now, parent.Err()
			}
			return now, fmt.Errorf("%w after %s waiting for %s (last read: %s)", errTimeout, timeout, what, now)
		case <-progress.C:
			rep.Printf("  still waiting for %s (now %s, %s elapsed)", what, now, time.Since(start).Round(time.Second))
		case <-ticker.C:
			d, n, err := fn(ctx)
			if err != nil {
				if parent.Err() != nil {
					return now, parent.Err()
				}
				if ctx.Err() != nil {
					return now, fmt.Errorf("%w after %s waiting for %s (last read: %s)", errTimeout, timeout, what, now)
				}
				return n, err
			}
			now = n
			if d {
				return now, nil
			}
		}
	}
}
