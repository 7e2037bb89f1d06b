package process

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// WaitHealthy reads url every 200 ms until it answers 200, failing at once if
// p exits (with the end of its log) and after timeout with the last answer or
// error read.
func WaitHealthy(ctx context.Context, p *Process, url string, tlsCfg *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	err := poll.Until(ctx, timeout, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		if p != nil && p.Exited() {
			return false, poll.Stop(p.ExitedError())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, poll.Stop(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("answered %s", resp.Status)
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to answer 200: %w", url, err)
	}
	return nil
}

// WaitListening dials network/address every 100 ms until it connects, failing at once if p
// exits (with the end of its log) and after timeout with the last dial error.
func WaitListening(ctx context.Context, p *Process, network, address string, timeout time.Duration) error {
	err := poll.Until(ctx, timeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if p != nil && p.Exited() {
			return false, poll.Stop(p.ExitedError())
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, address)
		if err != nil {
			return false, err
		}
		conn.Close()
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for a listener on %s: %w", address, err)
	}
	return nil
}
