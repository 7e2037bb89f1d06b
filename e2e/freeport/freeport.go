// Package freeport picks loopback ports for the servers a test or the local
// control plane starts: the one port picker of the repository.
//
// A port is chosen some time before its server binds it (etcd's before the
// API server starts, KEDA's a minute later). A port from the kernel's
// ephemeral range (net.Listen on :0) can meanwhile become the source port of
// any outgoing connection, and the server then fails with "address already in
// use". So ports come from below that range, where the kernel never picks a
// source port; each is checked free by binding it, and all are held until
// every one is chosen so that no two coincide.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// span is how many ports below the ephemeral range are candidates.
const span = 12000

// Ports returns n loopback ports that nothing listens on now and that the
// kernel will not hand out as source ports.
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
	return pick(n, order)
}

// pick returns the first n ports of order that can be bound now, holding each
// until all are chosen.
func pick(n int, order []int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var ports []int
	for _, p := range order {
		if len(ports) == n {
			break
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // in use
		}
		held = append(held, l)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("only %d of %d loopback ports free among %d candidates", len(ports), n, len(order))
	}
	return ports, nil
}

// Addr is one such port as a loopback address, "127.0.0.1:port".
func Addr() (string, error) {
	p, err := Ports(1)
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(p[0]), nil
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
