// Package tcpproxy is a loopback TCP forwarder that a test can cut and
// restore, to make one client's view of a server (the exporter's view of the
// API server) fail while everything else keeps working.
package tcpproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards every connection on its address to a target.
type Proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}

	fromTarget atomic.Int64
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Addr is host:port of the proxy.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// BytesFromTarget is how many bytes the target has sent to clients so far:
// what a client read off the wire, TLS and HTTP framing included.
func (p *Proxy) BytesFromTarget() int64 { return p.fromTarget.Load() }

// Cut closes every open connection and refuses new ones until Restore: to its
// clients the target is unreachable.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore forwards again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// Close stops the proxy and its connections.
func (p *Proxy) Close() error {
	p.Cut()
	return p.l.Close()
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(client net.Conn) {
	if !p.track(client) {
		client.Close()
		return
	}
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		server.Close()
		return
	}
	defer p.untrack(server)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(countingWriter{client, &p.fromTarget}, server); done <- struct{}{} }()
	<-done
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.Close()
	delete(p.conns, c)
}

// countingWriter counts as it forwards, so a long-lived (keep-alive)
// connection's bytes are seen per request, not only when it closes.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

// Write counts before forwarding: a client that has read the bytes must find
// them counted (counting after the write raced the client's next look).
func (c countingWriter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	n, err := c.w.Write(b)
	c.n.Add(int64(n - len(b))) // uncount what was not delivered
	return n, err
}
