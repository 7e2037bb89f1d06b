// Package freeport picks loopback ports for the servers a test or the local
// control plane starts: the one port picker of the repository.
//
// A port is chosen some time before its server binds it (etcd's before the
// API server starts, the exporter's after a whole pulumi up). Two hazards lie
// in that gap:
//   - a port from the kernel's ephemeral range (net.Listen on :0) can become the
//     source port of any outgoing connection. So ports come from below that
//     range, where the kernel never picks a source port;
//   - another picker (a second control plane in the same test, or a test binary
//     of another package running beside it) finds the same port free, because
//     nothing listens on it yet, and its server takes it first. So every port
//     handed out is reserved, by a lock on a file named after it, for as long as
//     the process that chose it lives; pickers skip reserved ports. The kernel
//     drops the lock when the process ends, however it ends, so nothing stale is
//     left to clean up (the empty lock files stay, as lock files do).
//
// Each port is also checked free by binding it, and all are held until every
// one is chosen, so a port some other program listens on is never chosen.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// span is how many ports below the ephemeral range are candidates.
const span = 12000

// reservations is the machine-wide reservation directory every picker of this
// user shares.
var reservations = &registry{dir: filepath.Join(os.TempDir(), fmt.Sprintf("warm-pool-autoscaling-keda-ports-%d", os.Getuid()))}

// Ports returns n loopback ports that nothing listens on now, that the kernel
// will not hand out as source ports, and that no other picker holds; they stay
// reserved for this process until it ends.
func Ports(n int) ([]int, error) {
	lo, hi := candidates()
	if hi-lo < n {
		return nil, fmt.Errorf("the kernel's ephemeral ports start at %d, leaving fewer than %d ports below them; "+
			"raise the first port of net.ipv4.ip_local_port_range", hi, n)
	}
	// From a random start, so that two pickers at once rarely try the same ports.
	start := rand.IntN(hi - lo)
	order := make([]int, 0, hi-lo)
	for i := 0; i < hi-lo; i++ {
		order = append(order, lo+(start+i)%(hi-lo))
	}
	return reservations.pick(n, order)
}

// Addr is one such port as a loopback address, "127.0.0.1:port".
func Addr() (string, error) {
	p, err := Ports(1)
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(p[0]), nil
}

// registry reserves ports by locking a file per port in dir. The locks are
// flock(2) locks on files this process keeps open: a second lock on the same
// file fails whether it comes from this process or another one.
type registry struct {
	dir  string
	mu   sync.Mutex
	held []*os.File // open for the process's life: closing one would free its port
}

// pick returns the first n ports of order that no picker holds and that can be
// bound now, holding each listener until all are chosen, and reserves them.
func (r *registry) pick(n int, order []int) ([]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("the port reservations' directory: %w", err)
	}
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	var ports []int
	var reserved []*os.File
	release := func() {
		for _, f := range reserved {
			f.Close()
		}
	}
	for _, p := range order {
		if len(ports) == n {
			break
		}
		lock, err := r.reserve(p)
		if err != nil {
			release()
			return nil, err
		}
		if lock == nil {
			continue // another picker holds it
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			lock.Close() // some other program listens on it
			continue
		}
		listeners = append(listeners, l)
		reserved = append(reserved, lock)
		ports = append(ports, p)
	}
	if len(ports) < n {
		release()
		return nil, fmt.Errorf("only %d of %d loopback ports free among %d candidates (reservations in %s)", len(ports), n, len(order), r.dir)
	}
	r.held = append(r.held, reserved...)
	return ports, nil
}

// reserve locks port p's file: the open, locked file, or nil when another
// picker holds it.
func (r *registry) reserve(p int) (*os.File, error) {
	path := filepath.Join(r.dir, strconv.Itoa(p))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reserving port %d: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("reserving port %d: flock %s: %w", p, path, err)
	}
	return f, nil
}

// candidates is the range [lo, hi) of ports just below the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range, 32768 by default).
func candidates() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	return below(hi)
}

// below is the candidate range for an ephemeral range starting at first: the
// span ports below it, never privileged ones.
func below(first int) (lo, hi int) {
	lo = first - span
	if lo < 1024 {
		lo = 1024
	}
	return lo, first
}
