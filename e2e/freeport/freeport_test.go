package freeport

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestPortsAreDistinctFreeAndBelowTheEphemeralRange(t *testing.T) {
	// The property, read independently of the code under test: no port is in the kernel's
	// ephemeral range, none is privileged.
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	first, _ := strconv.Atoi(f[0])
	last, _ := strconv.Atoi(f[1])
	ports, err := Ports(40)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p >= first && p <= last || p < 1024 {
			t.Errorf("port %d is privileged or in the ephemeral range %d-%d, where the kernel hands out source ports", p, first, last)
		}
		if seen[p] {
			t.Errorf("port %d chosen twice in %v", p, ports)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d was returned but cannot be bound: %v", p, err)
			continue
		}
		l.Close()
	}
}

func TestAPortInUseIsNeverChosen(t *testing.T) {
	ports, err := Ports(5)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for _, p := range ports[:3] {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	got, err := pick(2, ports)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != ports[3] || got[1] != ports[4] {
		t.Errorf("chose %v among %v with the first three held", got, ports)
	}
	if _, err := pick(3, ports); err == nil {
		t.Errorf("chose 3 ports among %v with only 2 free", ports)
	}
}

func TestTheRangeNeverReachesPrivilegedPorts(t *testing.T) {
	for _, c := range []struct{ first, lo, hi int }{
		{32768, 20768, 32768},
		{5000, 1024, 5000},
		{1024, 1024, 1024},
	} {
		if lo, hi := below(c.first); lo != c.lo || hi != c.hi {
			t.Errorf("below(%d) = [%d, %d), want [%d, %d)", c.first, lo, hi, c.lo, c.hi)
		}
	}
}
