// Package poll is the one wait of the tests and the local control plane: framework's Eventually
// and localcluster's waits are built on Until. A read that fails is retried (an API server or an
// exporter may be starting) and the last failure is reported with the number of reads, so a
// wait that times out says what it last saw; a failed read is never taken as a value.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// stopError ends a wait at once: retrying cannot help (the process it waits for has exited).
type stopError struct{ error }

func (e stopError) Unwrap() error { return e.error }

// Stop wraps err so that Until returns it at once instead of retrying.
func Stop(err error) error { return stopError{err} }

// Until reads every interval until read says done, failing when timeout passes or ctx ends. A
// read error is retried, unless Stop wrapped it.
func Until(ctx context.Context, timeout, interval time.Duration, read func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	reads := 0
	for {
		done, err := read(ctx)
		reads++
		if err == nil && done {
			return nil
		}
		var stop stopError
		if errors.As(err, &stop) {
			return stop.error
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("not reached after %d reads; last read error: %w", reads, lastErr)
			}
			return fmt.Errorf("not reached after %d reads", reads)
		case <-time.After(interval):
		}
	}
}
