package exporter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The token is read from its file on every request: a rotated file is used by
// the very next scrape, with no restart.
func TestTokenFileIsReReadOnEveryRequest(t *testing.T) {
	api := newFakeAPI(t, testNS)
	api.addClaims("claim", 4, nil)
	api.token = testToken
	h := newHarness(t, api, "", time.Minute)
	h.wantCount(t, 4, true)

	// Rotate the way the kubelet does: the API accepts only the new token now.
	api.mu.Lock()
	api.token = "token-two-rotated"
	api.mu.Unlock()
	if err := os.WriteFile(h.tokenFile, []byte("token-two-rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.wantCount(t, 4, true)

	reqs := api.recorded()
	if len(reqs) != 2 || reqs[0].Auth != "Bearer "+testToken || reqs[1].Auth != "Bearer token-two-rotated" {
		t.Fatalf("Authorization headers = %q, want the old token then the rotated one", []string{reqs[0].Auth, reqs[len(reqs)-1].Auth})
	}
	if strings.Contains(h.logs.String(), "token-two") || strings.Contains(h.logs.String(), testToken) {
		t.Errorf("a token appears in the log:\n%s", h.logs.String())
	}
}

// The API server's certificate is trusted through the CA file, and only
// through it: a different CA fails the read.
func TestCAFromFile(t *testing.T) {
	api := newFakeAPITLS(t, testNS)
	api.addClaims("claim", 5, nil)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(testToken), 0o600)
	writeCA := func(name string, der []byte) string {
		p := filepath.Join(dir, name)
		b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	countWith := func(caFile string) (int64, error) {
		c, err := newAPIClient(Config{APIURL: api.URL, TokenFile: tokenFile, CAFile: caFile, ReadTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r, err := newCounter(c, Pool{Namespace: testNS}).count(context.Background())
		return r.count, err
	}

	if n, err := countWith(writeCA("right.crt", api.Certificate().Raw)); err != nil || n != 5 {
		t.Errorf("with the server's CA: count %d, err %v; want 5", n, err)
	}
	if _, err := countWith(writeCA("wrong.crt", otherCA(t))); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("with another CA: err %v, want a certificate error", err)
	}
	if _, err := newAPIClient(Config{APIURL: api.URL, CAFile: filepath.Join(dir, "absent.crt")}); err == nil {
		t.Error("a missing CA file was accepted")
	}
}

// otherCA is a self-signed CA certificate that signed nothing the fake serves
// (every httptest TLS server shares one built-in certificate).
func otherCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// A failed later page never puts the continue token (it encodes the last
// claim's name) or the claim's name into stale_reason, which /demand serves
// without authentication, or into the log: not from a transport error's URL,
// nor from an error page that echoes the request.
func TestErrorsCarryNoContinueToken(t *testing.T) {
	faults := map[string]func(w http.ResponseWriter, r *http.Request){
		"connection dropped": func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		"error page echoing the request": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "upstream failed for GET "+r.URL.RequestURI()+" (continue "+r.URL.Query().Get("continue")+")")
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, testNS)
			api.addClaims("claim", 1203, partOfLabels)
			h := newHarness(t, api, testSelector, time.Minute)
			h.wantCount(t, 1203, true) // requests 1-3
			var token string           // written by the fault, which runs under api.mu
			api.setFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if n < 5 { // page 2 of the second read, and the transport's retry of it
					return false
				}
				token = r.URL.Query().Get("continue")
				fault(w, r)
				return true
			})
			reason := h.staleReason(t, 1203)
			api.mu.Lock()
			sent := token
			api.mu.Unlock()
			if sent == "" {
				t.Fatal("page 2 carried no continue token")
			}
			if !strings.Contains(reason, "page 2") {
				t.Errorf("stale_reason = %q, want it to name page 2", reason)
			}
			for where, text := range map[string]string{"stale_reason": reason, "log": h.logs.String()} {
				for _, secret := range []string{sent, url.QueryEscape(sent), "continue=", "claim-00499"} {
					if strings.Contains(text, secret) {
						t.Errorf("%s carries %q: %s", where, secret, text)
					}
				}
			}
		})
	}
}

// The first request's error keeps its URL, without the query: the reader
// still learns which server failed.
func TestTransportErrorNamesTheServer(t *testing.T) {
	api := newFakeAPI(t, testNS)
	h := newHarness(t, api, testSelector, time.Minute)
	api.Close()
	code, m := h.demand(t)
	e, _ := m["error"].(string)
	if code != http.StatusServiceUnavailable || !strings.Contains(e, api.URL+"/apis/") || strings.Contains(e, "?") {
		t.Errorf("/demand = %d %q, want 503 naming %s without a query", code, e, api.URL)
	}
}
