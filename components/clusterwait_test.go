package components

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quick is for waits meant to give up; patient for waits meant to succeed (a loaded machine must
// not turn them into failures).
var (
	quick   = Patience{Timeout: 300 * time.Millisecond, Interval: 20 * time.Millisecond}
	patient = Patience{Timeout: time.Minute, Interval: 20 * time.Millisecond}
)

type said struct {
	msg       string
	ephemeral bool
}

func recorder() (*[]said, func(string, bool)) {
	var lines []said
	return &lines, func(msg string, ephemeral bool) { lines = append(lines, said{msg, ephemeral}) }
}

// fakeReader answers from a script: one entry per read, the last one repeated.
func fakeReader(script ...func() (bool, error)) (RuntimeClassReader, *int) {
	reads := 0
	return func(_ context.Context, name string) (bool, error) {
		i := min(reads, len(script)-1)
		reads++
		return script[i]()
	}, &reads
}

var (
	missing = func() (bool, error) { return false, nil }
	present = func() (bool, error) { return true, nil }
	refused = func() (bool, error) {
		return false, errors.New("GET RuntimeClass isolated-sandbox answered 401 Unauthorized")
	}
)

func TestRuntimeClassPresentAtOnceIsNotWaitedFor(t *testing.T) {
	read, reads := fakeReader(present)
	lines, say := recorder()
	start := time.Now()
	require.NoError(t, waitForRuntimeClass(context.Background(), read, "isolated-sandbox", Patience{Timeout: time.Hour, Interval: time.Hour}, say))
	// A hang guard: a wait would take the hour.
	assert.Less(t, time.Since(start), 30*time.Second, "a RuntimeClass that is there costs one read, no wait")
	assert.Equal(t, 1, *reads)
	assert.Empty(t, *lines, "nothing to say")
}

func TestRuntimeClassThatAppearsLateIsWaitedForWithProgress(t *testing.T) {
	read, reads := fakeReader(missing, refused, missing, present)
	lines, say := recorder()
	require.NoError(t, waitForRuntimeClass(context.Background(), read, "isolated-sandbox", patient, say))
	assert.Equal(t, 4, *reads)
	require.Len(t, *lines, 4)
	first := (*lines)[0]
	assert.False(t, first.ephemeral, "the first line stays in the output")
	assert.Contains(t, first.msg, "RuntimeClass isolated-sandbox is not on the new cluster yet (the API answers that it does not exist): EKS Auto Mode adds it; waiting up to 1m0s")
	assert.True(t, (*lines)[1].ephemeral)
	assert.Contains(t, (*lines)[1].msg, "waiting for RuntimeClass isolated-sandbox, which EKS Auto Mode adds to a new cluster")
	assert.Contains(t, (*lines)[1].msg, "the read failed: GET RuntimeClass isolated-sandbox answered 401 Unauthorized")
	assert.Equal(t, said{"RuntimeClass isolated-sandbox is on the new cluster", false}, (*lines)[3])
}

func TestRuntimeClassThatNeverAppearsSaysToRunUpAgain(t *testing.T) {
	for name, answer := range map[string]func() (bool, error){"absent": missing, "unreadable": refused} {
		t.Run(name, func(t *testing.T) {
			read, reads := fakeReader(answer)
			lines, say := recorder()
			err := waitForRuntimeClass(context.Background(), read, "isolated-sandbox", quick, say)
			require.Error(t, err)
			// The first read and one more after a 20 ms pause: how many more fit in 300 ms
			// depends on the machine's load. The message below says the wait was bounded.
			assert.GreaterOrEqual(t, *reads, 2, "it kept asking")
			assert.GreaterOrEqual(t, len(*lines), *reads-1, "every miss but the last is reported")
			msg := err.Error()
			assert.Contains(t, msg, `RuntimeClass "isolated-sandbox" is not on the new cluster after waiting 300ms`)
			assert.Contains(t, msg, "Run `pulumi up` again: it resumes here")
			assert.NotContains(t, msg, "not found")
			if name == "unreadable" {
				assert.Contains(t, msg, "the last read failed: GET RuntimeClass isolated-sandbox answered 401 Unauthorized")
			} else {
				assert.Contains(t, msg, "the API answered that it does not exist")
			}
		})
	}
}

// apiKubeconfig is a kubeconfig for srv the way pulumi-eks writes one (server and CA data), with a token.
func apiKubeconfig(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	b, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "aws",
		"clusters": []any{map[string]any{"name": "kubernetes", "cluster": map[string]any{
			"server": srv.URL, "certificate-authority-data": base64.StdEncoding.EncodeToString(ca)}}},
		"contexts": []any{map[string]any{"name": "aws", "context": map[string]any{"cluster": "kubernetes", "user": "aws"}}},
		"users":    []any{map[string]any{"name": "aws", "user": map[string]any{"token": "t0ken"}}},
	})
	require.NoError(t, err)
	return string(b)
}

func TestAPIEndpointWaitPollsHealthzUntilItAnswers(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		if hits.Add(1) <= 2 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	lines, say := recorder()
	require.NoError(t, WaitForAPIEndpoint(context.Background(), apiKubeconfig(t, srv), patient, say))
	assert.EqualValues(t, 3, hits.Load())
	require.Len(t, *lines, 3)
	assert.Contains(t, (*lines)[0].msg, "does not answer GET /healthz yet (GET /healthz answered 503 Service Unavailable)")
	assert.True(t, (*lines)[1].ephemeral)
	assert.Contains(t, (*lines)[2].msg, "answers /healthz")

	// Answering at once: one request, nothing said.
	hits.Store(10)
	lines, say = recorder()
	require.NoError(t, WaitForAPIEndpoint(context.Background(), apiKubeconfig(t, srv), patient, say))
	assert.Empty(t, *lines)
}

func TestAPIEndpointWaitIsBoundedAndChecksTheClusterCA(t *testing.T) {
	down := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	_, say := recorder()
	// The waits below must give up, yet only after a TLS handshake and a GET have answered: a
	// loaded machine has taken longer than 300 ms for that.
	giveUp := Patience{Timeout: 3 * time.Second, Interval: 50 * time.Millisecond}
	err := WaitForAPIEndpoint(context.Background(), apiKubeconfig(t, down), giveUp, say)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer GET /healthz within 3s (last: GET /healthz answered 503 Service Unavailable)")
	assert.Contains(t, err.Error(), "run `pulumi up` again")

	// An API server that refuses anonymous requests has answered all the same.
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		refusing := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", status) }))
		require.NoError(t, WaitForAPIEndpoint(context.Background(), apiKubeconfig(t, refusing), patient, say), "%d", status)
		refusing.Close()
	}

	// A server whose certificate the cluster's CA did not sign is never taken for the cluster.
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer up.Close()
	require.NoError(t, WaitForAPIEndpoint(context.Background(), apiKubeconfig(t, up), patient, say))
	otherCA := base64.StdEncoding.EncodeToString(selfSignedPEM(t))
	ownCA := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw}))
	impostor := strings.Replace(apiKubeconfig(t, up), ownCA, otherCA, 1)
	require.NotEqual(t, apiKubeconfig(t, up), impostor)
	err = WaitForAPIEndpoint(context.Background(), impostor, giveUp, say)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate signed by unknown authority")

	_, err = kubeconfigEndpointOrErr(`{"apiVersion":"v1","kind":"Config"}`)
	assert.ErrorContains(t, err, "names no server")
}

func kubeconfigEndpointOrErr(kc string) (string, error) {
	server, _, err := kubeconfigEndpoint(kc)
	return server, err
}

func TestKubeconfigRuntimeClassReaderReadsWithTheKubeconfigsCredentials(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/apis/node.k8s.io/v1/runtimeclasses/isolated-sandbox":
			_, _ = w.Write([]byte(`{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"isolated-sandbox"},"handler":"x"}`))
		case "/apis/node.k8s.io/v1/runtimeclasses/broken":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	read, err := kubeconfigRuntimeClassReader(apiKubeconfig(t, srv))
	require.NoError(t, err)
	found, err := read(context.Background(), "isolated-sandbox")
	assert.True(t, found)
	assert.NoError(t, err)
	found, err = read(context.Background(), "other")
	assert.False(t, found)
	assert.NoError(t, err, "404 is an answer: not there")
	_, err = read(context.Background(), "broken")
	assert.ErrorContains(t, err, "500")

	noToken, err := kubeconfigRuntimeClassReader(strings.Replace(apiKubeconfig(t, srv), "t0ken", "wrong", 1))
	require.NoError(t, err)
	_, err = noToken(context.Background(), "isolated-sandbox")
	assert.ErrorContains(t, err, "401", "a refused read is an error to report, not a missing RuntimeClass")
}

// selfSignedPEM is a CA certificate nobody's server uses.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// The last attempt, cut short by the deadline, does not replace the answer before it in the message.
func TestTheLastAnswerIsKeptWhenTheDeadlineCutsAnAttempt(t *testing.T) {
	reads := 0
	read := func(ctx context.Context, name string) (bool, error) {
		if reads++; reads == 1 {
			return false, nil // the API answers: not there
		}
		<-ctx.Done() // every later read hangs until the deadline
		return false, ctx.Err()
	}
	_, say := recorder()
	err := waitForRuntimeClass(context.Background(), read, "isolated-sandbox", Patience{Timeout: 200 * time.Millisecond, Interval: 10 * time.Millisecond}, say)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(the API answered that it does not exist)")
	assert.NotContains(t, err.Error(), "deadline")
}
