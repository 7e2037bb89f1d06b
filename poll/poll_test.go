package poll

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilRetriesAReadErrorAndReportsTheLast(t *testing.T) {
	calls := 0
	err := Until(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return calls == 3, map[bool]error{true: errors.New("connection refused")}[calls < 3]
	})
	if err != nil || calls != 3 {
		t.Fatalf("a read error ended the wait: %v after %d reads", err, calls)
	}
	// Five reads, then one that hangs until the deadline, so the count does not depend on how
	// fast the machine reads: the deadline is far above five reads and always reached.
	calls = 0
	err = Until(context.Background(), 2*time.Second, time.Millisecond, func(ctx context.Context) (bool, error) {
		calls++
		switch {
		case calls > 5:
			<-ctx.Done()
			return false, ctx.Err()
		case calls%2 == 0:
			return false, nil // an answer between the failures does not hide them
		}
		return false, errors.New("503 Service Unavailable")
	})
	var nr *NotReached
	if !errors.As(err, &nr) || nr.Interrupted != nil {
		t.Fatalf("a timeout is not a *NotReached: %v", err)
	}
	// (The read the deadline cut short is not counted: see the next test but one.)
	if nr.Reads != 5 || nr.Failed != 3 || calls != 6 {
		t.Fatalf("counted %d reads, %d failed; there were %d, every other one failing", nr.Reads, nr.Failed, calls)
	}
	if !strings.Contains(err.Error(), "last read error: 503") || !strings.Contains(err.Error(), "reads") {
		t.Fatalf("the timeout does not say how many reads and what the last failed one said: %v", err)
	}
}

func TestStopEndsTheWaitAtOnce(t *testing.T) {
	calls := 0
	exited := errors.New("etcd exited")
	err := Until(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return false, Stop(exited)
	})
	// One read proves it: a wait that went on would read again within the millisecond.
	if !errors.Is(err, exited) || calls != 1 {
		t.Fatalf("Stop did not end the wait at the first read: %v after %d reads", err, calls)
	}
}

func TestAnEndedContextIsAnInterruptionNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Until(ctx, time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		if calls++; calls == 3 {
			cancel()
		}
		return false, nil
	})
	var nr *NotReached
	if !errors.As(err, &nr) || !errors.Is(err, context.Canceled) || nr.Interrupted == nil || calls != 3 {
		t.Fatalf("a cancelled wait: %v after %d reads", err, calls)
	}
}

// The deadline cuts the last read short: that read's "context deadline exceeded" does not
// replace what the read before it said.
func TestAReadTheDeadlineCutsDoesNotReplaceTheReadingBefore(t *testing.T) {
	for name, first := range map[string]error{"an answer": nil, "a failure": errors.New("401 Unauthorized")} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			// A second, far above one read and a 1 ms pause: the second read must start
			// before the deadline, and then hangs until it.
			err := Until(context.Background(), time.Second, time.Millisecond, func(ctx context.Context) (bool, error) {
				if calls++; calls == 1 {
					return false, first
				}
				<-ctx.Done() // every later read hangs until the deadline
				return false, ctx.Err()
			})
			var nr *NotReached
			if !errors.As(err, &nr) || nr.Err != first || nr.LastErr != first || nr.Reads != 1 || calls != 2 {
				t.Fatalf("got %v (%+v after %d calls), want the first read's %v to stand", err, nr, calls, first)
			}
		})
	}
	// With no read before it, the cut one is all there is to say.
	err := Until(context.Background(), 20*time.Millisecond, time.Millisecond, func(ctx context.Context) (bool, error) {
		<-ctx.Done()
		return false, ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 failed, the last read error: context deadline exceeded") {
		t.Fatalf("every read hung: %v", err)
	}
}

func TestProgressIsToldAfterTheFirstReadThenEveryPeriod(t *testing.T) {
	var told []Status
	calls := 0
	w := Wait{Timeout: time.Minute, Interval: 10 * time.Millisecond, Every: 45 * time.Millisecond,
		Progress: func(s Status) { told = append(told, s) }}
	err := w.Until(context.Background(), func(context.Context) (bool, error) {
		calls++
		if calls == 2 {
			return false, errors.New("connection refused")
		}
		return calls == 20, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 19 reads that did not end the wait, 10 ms apart or more: the first, then one every 45 ms
	// or more.
	if len(told) < 2 || told[0].Reads != 1 || told[0].Err != nil {
		t.Fatalf("told %d times (%+v), want after the first read, then every 45 ms or more", len(told), told)
	}
	for i := 1; i < len(told); i++ {
		if told[i].Waited-told[i-1].Waited < 45*time.Millisecond {
			t.Fatalf("told at %s, then at %s: closer than Every", told[i-1].Waited, told[i].Waited)
		}
	}
	if last := told[len(told)-1]; last.Failed != 1 || last.LastErr == nil || last.Err != nil {
		t.Fatalf("the status does not keep the failed read apart from the latest: %+v", last)
	}

	// Every 0: after every read that does not end the wait.
	told, calls = nil, 0
	w.Every = 0
	_ = w.Until(context.Background(), func(context.Context) (bool, error) { calls++; return calls == 4, nil })
	if len(told) != 3 || told[1].Reads != 2 {
		t.Fatalf("Every 0: told %d times (%+v), want 3", len(told), told)
	}
}

func TestWakeReadsAtOnce(t *testing.T) {
	wake := make(chan struct{}, 1)
	var calls atomic.Int32
	w := Wait{Timeout: 10 * time.Second, Interval: time.Hour, Wake: wake}
	go func() {
		for calls.Load() < 1 {
			time.Sleep(time.Millisecond)
		}
		wake <- struct{}{}
	}()
	err := w.Until(context.Background(), func(context.Context) (bool, error) { return calls.Add(1) == 2, nil })
	if err != nil {
		t.Fatalf("the wake did not bring the next read: %v", err)
	}

	// A closed Wake is ignored: the reads keep to the interval.
	closed := make(chan struct{})
	close(closed)
	calls.Store(0)
	_ = Wait{Timeout: 50 * time.Millisecond, Interval: 20 * time.Millisecond, Wake: closed}.Until(context.Background(),
		func(context.Context) (bool, error) { calls.Add(1); return false, nil })
	if n := calls.Load(); n > 5 {
		t.Fatalf("a closed Wake: %d reads in 50 ms at a 20 ms interval", n)
	}
}

func TestConsistentlyHoldsForTheWholeWindow(t *testing.T) {
	var at []time.Duration
	const window = time.Second
	start := time.Now()
	readings, err := Consistently(context.Background(), window, 30*time.Millisecond, func(context.Context) (bool, error) {
		at = append(at, time.Since(start))
		return true, nil
	})
	// at its start and through to its end; how many between depends on how a loaded machine
	// schedules them
	if err != nil || readings != len(at) || readings < 2 {
		t.Fatalf("an accepted window: %d readings, %v", readings, err)
	}
	// The first reading is taken at once (well inside the first half, however loaded the
	// machine) and the last no earlier than the window's end.
	if at[0] >= window/2 || at[len(at)-1] < window {
		t.Fatalf("the readings at %v do not span the %s window", at, window)
	}
}

// A reading that begins a hair before the window's end and returns after it is not the last:
// the window is held by a reading taken at or after its end (a loaded machine ran one 20 us early).
func TestConsistentlyEndsOnAReadingTakenAtTheEnd(t *testing.T) {
	const window = 200 * time.Millisecond
	var at []time.Duration
	start := time.Now()
	// One interval a millisecond short of the window: the second reading begins just before the
	// end, and takes 5 ms.
	readings, err := Consistently(context.Background(), window, window-time.Millisecond, func(context.Context) (bool, error) {
		at = append(at, time.Since(start))
		if len(at) == 2 {
			time.Sleep(5 * time.Millisecond)
		}
		return true, nil
	})
	if err != nil || readings != len(at) {
		t.Fatalf("an accepted window: %d readings, %v", readings, err)
	}
	if last := at[len(at)-1]; last < window {
		t.Fatalf("the last reading began at %s, before the %s window's end (readings at %v)", last, window, at)
	}
}

func TestConsistentlyFailsAtTheFirstRejectedReadingOrFailedRead(t *testing.T) {
	n := 0
	readings, err := Consistently(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		n++
		return n < 4, nil
	})
	if !errors.Is(err, ErrRejected) || readings != 4 || !strings.Contains(err.Error(), "reading 4") {
		t.Fatalf("a rejected reading: %d readings, %v", readings, err)
	}
	n = 0
	forbidden := errors.New("forbidden")
	readings, err = Consistently(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		if n++; n == 2 {
			return true, forbidden
		}
		return true, nil
	})
	if !errors.Is(err, forbidden) || errors.Is(err, ErrRejected) || readings != 2 {
		t.Fatalf("a failed read must fail the window: %d readings, %v", readings, err)
	}
	// An interrupt, here during the window's third reading, is not a window held.
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	readings, err = Consistently(ctx, time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		if n++; n == 3 {
			cancel()
		}
		return true, nil
	})
	if !errors.Is(err, context.Canceled) || readings != 3 {
		t.Fatalf("an interrupted window is not a held one: %d readings, %v", readings, err)
	}
}
