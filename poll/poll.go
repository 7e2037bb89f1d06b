// Package poll is the one wait of this repository: verify's waits, the waits of create mode on
// a new cluster (components), the tests' Eventually and Consistently (e2e/framework) and the
// local control plane's waits (e2e/localcluster) are all built on it. It imports only the
// standard library.
//
// Two ideas, kept apart:
//
//   - Until (eventually): read until a read says done. A read that fails is retried until the
//     deadline (an API server or an exporter may be starting): it is never taken as a value
//     and never ends the wait, and when the deadline passes the error says how many reads
//     were taken and what the last failed read said. Stop is the one way a read ends the
//     wait early: retrying cannot help (the process waited for has exited).
//   - Consistently: read for a whole window, every reading accepted. It fails at the first
//     reading it rejects, and at the first read that fails: a reading that could not be taken
//     proves nothing about its moment, so the window is not shown to hold.
//
// A Wait's Progress hook lets a long wait say that it is still waiting.
package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Wait is one wait's policy: how long, how often, and what to say on the way. The zero
// Interval reads again at once.
type Wait struct {
	// Timeout is how long Until waits at most, and the window Consistently holds for.
	Timeout time.Duration
	// Interval is the pause between reads.
	Interval time.Duration
	// Progress, when set, is told where the wait stands after a read that does not end it:
	// after the first, then after the first read at least Every after the call before (Every
	// 0: after every one). It is not called once the wait's time is up.
	Progress func(Status)
	Every    time.Duration
	// Wake, when set, makes the wait read at once instead of at the end of the pause (a watch
	// has delivered an event, say). A closed Wake is ignored from then on.
	Wake <-chan struct{}
}

// Status is where a wait stands.
type Status struct {
	Reads  int           // reads taken
	Failed int           // of those, how many failed
	Waited time.Duration // since the wait began
	// Err is the latest read's error: nil when it answered (not done yet, or accepted).
	Err error
	// LastErr is the latest failed read's error, nil when none failed.
	LastErr error
}

// Until reads every w.Interval until read says done (with no error), and returns nil then. A
// read's error is retried, unless Stop wrapped it: Until returns that error at once. Otherwise,
// when w.Timeout passes or ctx ends first, it returns a *NotReached. read is given a context
// that ends with the wait.
//
// A read that fails because the wait ended during it (the deadline cut it short) says less
// than the reading before it: when an earlier read completed it is not counted, and the
// earlier reading stands as the last.
func (w Wait) Until(ctx context.Context, read func(context.Context) (bool, error)) error {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	var s Status
	completed := false // a read ended on its own, not cut short by the wait's end
	say := w.progress()
	for {
		done, err := read(wctx)
		if err == nil && done {
			return nil
		}
		var stop stopError
		if errors.As(err, &stop) {
			return stop.error
		}
		if cut := err != nil && wctx.Err() != nil; !cut || !completed {
			s.note(err)
			completed = completed || !cut
		}
		s.Waited = time.Since(start)
		if wctx.Err() == nil {
			say(s)
		}
		if w.pause(wctx, w.Interval) != nil {
			s.Waited = time.Since(start)
			return &NotReached{Status: s, Timeout: w.Timeout, Interrupted: ctx.Err()}
		}
	}
}

// ErrRejected is what Consistently's error wraps when a reading was not accepted.
var ErrRejected = errors.New("rejected")

// Consistently reads at once, then every w.Interval, and last when the window w.Timeout has
// passed, so the readings span the whole window; every reading must be accepted (ok, with no
// error). It returns how many readings it took and, on failure, an error that wraps the failed
// read's error or ErrRejected; an ended ctx ends the window with ctx's error. read is given
// ctx itself, not a context cut at the window's end: the last reading is taken at the end.
func (w Wait) Consistently(ctx context.Context, read func(context.Context) (ok bool, err error)) (int, error) {
	start := time.Now()
	end := start.Add(w.Timeout)
	var s Status
	say := w.progress()
	for {
		readAt := time.Now()
		ok, err := read(ctx)
		s.note(err)
		s.Waited = time.Since(start)
		if ctx.Err() != nil {
			return s.Reads, fmt.Errorf("stopped after %d readings: %w", s.Reads, ctx.Err())
		}
		if err != nil {
			var stop stopError
			if errors.As(err, &stop) {
				err = stop.error
			}
			return s.Reads, fmt.Errorf("reading %d failed: %w", s.Reads, err)
		}
		if !ok {
			return s.Reads, fmt.Errorf("reading %d: %w", s.Reads, ErrRejected)
		}
		// Held once a reading taken at or after the end is accepted: a reading that began just
		// before the end and returned after it (a pause of one interval landing a hair short of
		// it) is not the last; the next one is taken at once.
		if !readAt.Before(end) {
			return s.Reads, nil
		}
		left := max(time.Until(end), 0)
		say(s)
		if err := w.pause(ctx, min(w.Interval, left)); err != nil {
			return s.Reads, fmt.Errorf("stopped after %d readings: %w", s.Reads, err)
		}
	}
}

// Until is Wait{Timeout: timeout, Interval: interval}.Until.
func Until(ctx context.Context, timeout, interval time.Duration, read func(context.Context) (bool, error)) error {
	return Wait{Timeout: timeout, Interval: interval}.Until(ctx, read)
}

// Consistently is Wait{Timeout: window, Interval: interval}.Consistently.
func Consistently(ctx context.Context, window, interval time.Duration, read func(context.Context) (bool, error)) (int, error) {
	return Wait{Timeout: window, Interval: interval}.Consistently(ctx, read)
}

// stopError ends a wait at once: retrying cannot help (the process it waits for has exited).
type stopError struct{ error }

func (e stopError) Unwrap() error { return e.error }

// Stop wraps err so that Until returns it at once instead of retrying.
func Stop(err error) error { return stopError{err} }

// NotReached is Until's error when its time passed, or ctx ended, before a read said done.
type NotReached struct {
	Status
	Timeout time.Duration
	// Interrupted is ctx's error when ctx ended (an interrupt, a caller's own deadline); nil
	// when the wait's own timeout passed.
	Interrupted error
}

func (e *NotReached) Error() string {
	var b strings.Builder
	if e.Interrupted != nil {
		fmt.Fprintf(&b, "not reached: %v after %d reads", e.Interrupted, e.Reads)
	} else {
		fmt.Fprintf(&b, "not reached after %d reads in %s", e.Reads, e.Timeout)
	}
	if e.LastErr != nil {
		fmt.Fprintf(&b, "; %d failed, the last read error: %v", e.Failed, e.LastErr)
	}
	return b.String()
}

// Unwrap is the last read error and the interruption, those that are set.
func (e *NotReached) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.LastErr, e.Interrupted} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (s *Status) note(err error) {
	s.Reads++
	s.Err = err
	if err != nil {
		s.Failed++
		s.LastErr = err
	}
}

// progress is w.Progress held to w.Every.
func (w Wait) progress() func(Status) {
	var last time.Time
	return func(s Status) {
		if w.Progress == nil || (!last.IsZero() && time.Since(last) < w.Every) {
			return
		}
		last = time.Now()
		w.Progress(s)
	}
}

// pause waits d, or until w.Wake fires; it returns ctx's error if ctx ends first.
func (w Wait) pause(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	wake := w.Wake
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case _, open := <-wake:
			if open {
				return nil
			}
			wake = nil
		}
	}
}
