package exporter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
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
	h := newHarness(t, api, "", 5*time.Second)
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
		c, err := newAPIClient(Config{APIURL: api.URL, TokenFile: tokenFile, CAFile: caFile, Namespace: testNS, ReadTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := (&counter{api: c}).count(context.Background())
		return n, err
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
