package verifier

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestParseDemand(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   int64
		ok     bool
	}{
		{"a read", 200, `{"active_claims": 3, "namespace": "ns", "selector": "", "read_at": "2026-11-08T01:47:26Z", "fresh": true, "method": "remainingItemCount"}`, 3, true},
		{"zero is a value when the exporter says it", 200, `{"active_claims": 0, "fresh": true}`, 0, true},
		{"503 before the first read", 503, `{"error": "no successful read yet"}`, 0, false},
		{"503 that still carries a count", 503, `{"active_claims": 0, "error": "API unreachable"}`, 0, false},
		{"200 without active_claims", 200, `{"error": "x"}`, 0, false},
		{"not JSON", 200, `warmpool_active_claims{namespace="ns"} 3`, 0, false},
		{"a string count", 200, `{"active_claims": "3"}`, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseDemand(tc.status, []byte(tc.body))
			if (err == nil) != tc.ok || (tc.ok && d.ActiveClaims != tc.want) {
				t.Fatalf("got %+v, %v", d, err)
			}
		})
	}
}

// The direct reader reads /demand and turns an unreachable exporter into an
// error, never into 0 claims.
func TestHTTPDemand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/demand" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"active_claims": 2, "fresh": true, "method": "list"}`))
	}))
	// A minute: the first read must succeed, however slow the machine; the second fails at once.
	d := httpDemand{url: srv.URL + "/demand", client: &http.Client{Timeout: time.Minute}}
	got, err := d.Read(context.Background())
	if err != nil || got.ActiveClaims != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	srv.Close()
	if _, err := d.Read(context.Background()); err == nil {
		t.Fatal("a closed exporter read as a value")
	}
}
