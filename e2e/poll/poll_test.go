package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntilRetriesAReadErrorAndReportsTheLast(t *testing.T) {
	calls := 0
	err := Until(context.Background(), time.Second, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return calls == 3, map[bool]error{true: errors.New("connection refused")}[calls < 3]
	})
	if err != nil || calls != 3 {
		t.Fatalf("a read error ended the wait: %v after %d reads", err, calls)
	}
	err = Until(context.Background(), 20*time.Millisecond, time.Millisecond, func(context.Context) (bool, error) {
		return false, errors.New("503 Service Unavailable")
	})
	if err == nil || !strings.Contains(err.Error(), "last read error: 503") || !strings.Contains(err.Error(), "reads") {
		t.Fatalf("the timeout does not say how many reads and what the last one saw: %v", err)
	}
}

func TestStopEndsTheWaitAtOnce(t *testing.T) {
	calls := 0
	exited := errors.New("etcd exited")
	start := time.Now()
	err := Until(context.Background(), time.Minute, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return false, Stop(exited)
	})
	if !errors.Is(err, exited) || calls != 1 || time.Since(start) > 10*time.Second {
		t.Fatalf("Stop did not end the wait at the first read: %v after %d reads", err, calls)
	}
}
