package exporter

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// An idle keep-alive connection is closed by the server after the idle
// timeout, while one that keeps asking is served: a client cannot hold the
// exporter's connections open for ever.
func TestIdleConnectionsAreClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	timeouts := serverTimeouts
	timeouts.idle = 100 * time.Millisecond
	timeouts.read = time.Hour // Go falls back to ReadTimeout without IdleTimeout
	srv := newHTTPServer(healthz(nil), timeouts)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	get := func() error {
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: exporter\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	}
	for i := range 3 { // back to back: the connection is kept alive
		if err := get(); err != nil {
			t.Fatalf("request %d on a kept-alive connection: %v", i+1, err)
		}
	}
	// Then idle: the server must close it. The read deadline only stops a
	// hang; what is asserted is EOF (closed by the server), not a timeout.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = r.ReadByte()
	if !errors.Is(err, io.EOF) {
		t.Errorf("reading the idle connection gave %v, want EOF: the server kept it open", err)
	}
}

// The production timeouts are all set, and a response may take as long as
// the scrape deadline.
func TestServerTimeoutsAreSet(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler(), serverTimeouts)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("server timeouts not all set: %+v", serverTimeouts)
	}
	if srv.WriteTimeout <= ScrapeDeadline {
		t.Errorf("WriteTimeout %s would cut off a scrape that waits its deadline %s", srv.WriteTimeout, ScrapeDeadline)
	}
}
