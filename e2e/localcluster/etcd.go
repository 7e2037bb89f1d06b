package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/process"
)

// startEtcd starts etcd, the control plane's store, and returns its client URL.
func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcdPeer)
	etcd, err := c.procs.Start("etcd", c.Binaries.Path("etcd"), []string{
		"--name=local", "--data-dir=" + filepath.Join(c.StateDir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=local=" + peerURL,
		// A throw-away store: durability buys nothing here and fsync costs seconds.
		"--unsafe-no-fsync=true", "--log-level=warn",
	})
	if err != nil {
		return "", err
	}
	if err := process.WaitHealthy(ctx, etcd, etcdURL+"/health", nil, 60*time.Second); err != nil {
		return "", fmt.Errorf("etcd: %w", err)
	}
	return etcdURL, nil
}
