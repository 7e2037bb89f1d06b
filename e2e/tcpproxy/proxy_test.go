package tcpproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s := bufio.NewScanner(c)
				for s.Scan() {
					_, _ = c.Write([]byte(s.Text() + "\n"))
				}
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip reports whether a line sent through addr comes back. Its bounds are a minute: a
// round trip that works ends at once, however slow the machine, and a cut proxy closes the
// connection (EOF) rather than letting it hang.
func roundTrip(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Minute)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "ping\n"
}

func TestCutMakesTheTargetUnreachableAndRestoreBringsItBack(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !roundTrip(p.Addr()) {
		t.Fatal("no round trip through the proxy before the cut")
	}
	if n := p.BytesFromTarget(); n != int64(len("ping\n")) {
		t.Fatalf("counted %d bytes from the target, want %d", n, len("ping\n"))
	}
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	time.Sleep(50 * time.Millisecond) // let the proxy track it
	p.Cut()
	if roundTrip(p.Addr()) {
		t.Fatal("a round trip went through a cut proxy")
	}
	_ = open.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection open before the cut survived it")
	}
	p.Restore()
	if !roundTrip(p.Addr()) {
		t.Fatal("no round trip after restore")
	}
}
