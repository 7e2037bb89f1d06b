package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// PollInterval is how often Eventually reads.
const PollInterval = 250 * time.Millisecond

// SandboxStartBound bounds a wait for a gVisor sandbox to start on the real node (a claim or a
// warm sandbox Ready). Idle, one starts in 1-5 s; with ./test's phases beside the real-node lane
// (load average near 40 on 2 cores) three claims' sandboxes took 2 min 52-54 s, past the 2 minutes
// a wait once allowed. The bound is for a sandbox that never starts, not a verdict on its speed.
const SandboxStartBound = 10 * time.Minute

// VerifyExecBound is the --exec-timeout the tests give verify on the real node: one exec into a
// gVisor sandbox, 30 s by default (what a user's idle cluster needs many times over), outlasted it
// under ./test's load ("runsc did not terminate successfully" once the 30 s cancelled it).
const VerifyExecBound = 3 * time.Minute

// Eventually reads until read says done or timeout passes, and fails t then, naming what it
// waited for. A read error does not end the wait (the API server or the exporter may be
// restarting): it is retried, and the last one is reported if the wait times out.
func Eventually(t testing.TB, ctx context.Context, what string, timeout time.Duration, read func(context.Context) (bool, error)) {
	t.Helper()
	if err := eventually(ctx, timeout, PollInterval, read); err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

// EventuallyErr is Eventually for callers without a t (the demo).
func EventuallyErr(ctx context.Context, what string, timeout time.Duration, read func(context.Context) (bool, error)) error {
	if err := eventually(ctx, timeout, PollInterval, read); err != nil {
		return fmt.Errorf("waiting %s for %s: %w", timeout, what, err)
	}
	return nil
}

func eventually(ctx context.Context, timeout, interval time.Duration, read func(context.Context) (bool, error)) error {
	return poll.Until(ctx, timeout, interval, read)
}

// Consistently reads every second for the whole window (the last reading at its end) and fails t
// at the first reading ok rejects, or at the first read error: a reading that could not be taken
// proves nothing about the window (poll.Consistently). observed says what was read, for the
// failure message.
func Consistently(t testing.TB, ctx context.Context, what string, window time.Duration, read func(context.Context) (ok bool, observed string, err error)) {
	t.Helper()
	t.Logf("for %s: %s", window, what)
	readings, err := consistently(ctx, window, time.Second, read)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Logf("%s: %d readings, all accepted", what, readings)
}

func consistently(ctx context.Context, window, interval time.Duration, read func(context.Context) (bool, string, error)) (int, error) {
	var observed string
	readings, err := poll.Consistently(ctx, window, interval, func(ctx context.Context) (bool, error) {
		ok, o, err := read(ctx)
		observed = o
		return ok, err
	})
	if errors.Is(err, poll.ErrRejected) {
		return readings, fmt.Errorf("read %s at reading %d", observed, readings)
	}
	return readings, err
}
