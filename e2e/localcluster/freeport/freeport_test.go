package freeport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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
	// A registry of its own: the shared one already holds these five.
	got, err := (&registry{dir: t.TempDir()}).pick(2, ports)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != ports[3] || got[1] != ports[4] {
		t.Errorf("chose %v among %v with the first three held", got, ports)
	}
	if _, err := (&registry{dir: t.TempDir()}).pick(3, ports); err == nil {
		t.Errorf("chose 3 ports among %v with only 2 free", ports)
	}
}

// Nothing listens on a port between its choice and its server's start; a second picker in the
// same process (a second control plane in one test) must still not be handed it.
func TestAPortHandedOutIsNeverHandedOutAgain(t *testing.T) {
	order := candidatesFreeNow(t, 4)
	dir := t.TempDir()
	first := &registry{dir: dir}
	a, err := first.pick(2, order)
	if err != nil {
		t.Fatal(err)
	}
	b, err := first.pick(1, order)
	if err != nil {
		t.Fatal(err)
	}
	c, err := (&registry{dir: dir}).pick(1, order)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != order[2] || c[0] != order[3] {
		t.Errorf("handed out %v, then %v, then (a second picker) %v among %v, none of them listened on: want %d then %d",
			a, b, c, order, order[2], order[3])
	}
}

// A test binary of another package running beside this one picks from the same range; a port it
// reserved is skipped while it lives and free again once it ends, however it ends.
func TestAPortReservedByAnotherProcessIsSkippedUntilItEnds(t *testing.T) {
	order := candidatesFreeNow(t, 2)
	dir := t.TempDir()
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "FREEPORT_HOLD_DIR="+dir, "FREEPORT_HOLD_PORT="+strconv.Itoa(order[0]))
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("the other process did not report its reservation: %q, %v", line, err)
	}
	got, err := (&registry{dir: dir}).pick(1, order)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != order[1] {
		t.Errorf("chose %d while another process holds %d: want %d", got[0], order[0], order[1])
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("the other process: %v", err)
	}
	got, err = (&registry{dir: dir}).pick(1, order[:1])
	if err != nil {
		t.Fatalf("port %d after the process that held it ended: %v", order[0], err)
	}
	if got[0] != order[0] {
		t.Errorf("chose %d, want %d", got[0], order[0])
	}
}

// TestMain runs as the other process of TestAPortReservedByAnotherProcessIsSkippedUntilItEnds
// when FREEPORT_HOLD_DIR is set: it reserves FREEPORT_HOLD_PORT, says so, and holds it until its
// stdin closes.
func TestMain(m *testing.M) {
	dir := os.Getenv("FREEPORT_HOLD_DIR")
	if dir == "" {
		os.Exit(m.Run())
	}
	p, err := strconv.Atoi(os.Getenv("FREEPORT_HOLD_PORT"))
	if err == nil {
		_, err = (&registry{dir: dir}).pick(1, []int{p})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// candidatesFreeNow is n ports nothing listens on, to order a registry of the test's own by.
func candidatesFreeNow(t *testing.T, n int) []int {
	t.Helper()
	ports, err := Ports(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
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
