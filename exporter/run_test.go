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
	// Three requests in one write, then their three responses: the connection is kept alive
	// between them without the test racing the 100 ms idle bound (a loaded machine took
	// longer than that between one response and the next request).
	req := "GET /healthz HTTP/1.1\r\nHost: exporter\r\n\r\n"
	if _, err := io.WriteString(conn, req+req+req); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for i := range 3 {
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err != nil {
			t.Fatalf("response %d on a kept-alive connection: %v", i+1, err)
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
