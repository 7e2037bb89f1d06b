package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEventuallyRetriesReadErrorsAndReportsTheLastOne(t *testing.T) {
	calls := 0
	// A minute: the wait ends on the third read, however slow the machine.
	err := eventually(context.Background(), time.Minute, 5*time.Millisecond, func(context.Context) (bool, error) {
		calls++
		if calls < 3 {
			return false, errors.New("connection refused")
		}
		return true, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("a read error ended the wait: err %v after %d calls", err, calls)
	}

	err = eventually(context.Background(), 50*time.Millisecond, 5*time.Millisecond, func(context.Context) (bool, error) {
		calls++
		if calls%2 == 0 {
			return false, errors.New("read " + strings.Repeat("x", calls%3))
		}
		return false, nil
	})
	if err == nil || !strings.Contains(err.Error(), "last read error: read") {
		t.Fatalf("the timeout does not report the last read error: %v", err)
	}
}

func TestEventuallyErrSaysWhatItWaitedFor(t *testing.T) {
	err := EventuallyErr(context.Background(), "spec.replicas=3", 10*time.Millisecond, func(context.Context) (bool, error) { return false, nil })
	if err == nil || !strings.Contains(err.Error(), "spec.replicas=3") {
		t.Fatalf("got %v", err)
	}
}

func TestConsistentlyFailsAtTheFirstRejectedReadingOrReadError(t *testing.T) {
	n := 0
	// Windows of a minute: each ends at its rejected reading or failed read, long before.
	readings, err := consistently(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, string, error) {
		n++
		return n < 4, "spec.replicas=" + string(rune('0'+n)), nil
	})
	if err == nil || readings != 4 || !strings.Contains(err.Error(), "spec.replicas=4") {
		t.Fatalf("rejected reading not reported: %d readings, %v", readings, err)
	}
	_, err = consistently(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, string, error) {
		return false, "", errors.New("forbidden")
	})
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("a read error was not a failure: %v", err)
	}
	// An accepted window is read through to its end: the last reading at or after it, however
	// late a loaded machine schedules the readings (so no count beyond the first and the last
	// is asserted; the first must end inside the window, which 300 ms leaves room for).
	const window = 300 * time.Millisecond
	var last time.Time
	start := time.Now()
	readings, err = consistently(context.Background(), window, 5*time.Millisecond, func(context.Context) (bool, string, error) {
		last = time.Now()
		return true, "", nil
	})
	if err != nil || readings < 2 || last.Sub(start) < window {
		t.Fatalf("an accepted window: %d readings, the last %s after the start of a %s window, %v", readings, last.Sub(start), window, err)
	}
}
