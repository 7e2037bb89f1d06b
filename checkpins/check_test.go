package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upstream stands in for kedacore.github.io/charts and GitHub's release downloads, as they answer:
// the index lists charts newest first with absolute archive URLs, and a release asset redirects
// to a storage URL signed for GET (HEAD there answers 403).
func upstream(t *testing.T, index func(base string) string) (*httptest.Server, Checker) {
	t.Helper()
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/charts/index.yaml", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(index(base))) })
	mux.HandleFunc("/kedacore/charts/releases/download/v2.21.0/keda-2.21.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/storage/keda-2.21.0.tgz?sig=get", http.StatusFound)
	})
	mux.HandleFunc("/charts/keda-2.20.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusPartialContent)
	})
	mux.HandleFunc("/storage/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "SignatureDoesNotMatch", http.StatusForbidden)
			return
		}
		assert.Equal(t, "bytes=0-0", r.Header.Get("Range"), "only the first byte is fetched")
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write([]byte("x"))
	})
	mux.HandleFunc("/kubernetes-sigs/agent-sandbox/releases/download/v1.0.10/sandbox-with-extensions.yaml", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/storage/sandbox-with-extensions.yaml?sig=get", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	base = srv.URL
	t.Cleanup(srv.Close)
	return srv, Checker{
		Client:    srv.Client(),
		ChartRepo: srv.URL + "/charts",
		ChartName: "keda",
		ManifestURL: func(v string) string {
			return srv.URL + "/kubernetes-sigs/agent-sandbox/releases/download/" + v + "/sandbox-with-extensions.yaml"
		},
	}
}

func kedaIndex(base string) string {
	return `apiVersion: v1
entries:
  keda:
  - name: keda
    version: 2.22.0
    urls: [` + base + `/kedacore/charts/releases/download/v2.22.0/keda-2.22.0.tgz]
  - name: keda
    version: 2.21.0
    urls: [` + base + `/kedacore/charts/releases/download/v2.21.0/keda-2.21.0.tgz]
  - name: keda
    version: 2.20.0
    urls: [keda-2.20.0.tgz]
  keda-add-ons-http:
  - name: keda-add-ons-http
    version: 0.11.0
    urls: [x.tgz]
generated: "2026-01-01T00:00:00Z"
`
}

func runCheck(t *testing.T, c Checker, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, c)
	return code, out.String() + errOut.String()
}

func TestPinsThatExistPass(t *testing.T) {
	_, c := upstream(t, kedaIndex)
	code, out := runCheck(t, c)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "OK   KEDA chart keda 2.21.0: listed in ")
	assert.Contains(t, out, "/kedacore/charts/releases/download/v2.21.0/keda-2.21.0.tgz)")
	assert.Contains(t, out, "OK   agent-sandbox release manifest v1.0.10: the release asset answers")
	assert.Contains(t, out, "2/2 pinned artifacts found")

	// A chart URL relative to the repository, on a server that refuses HEAD.
	code, out = runCheck(t, c, "-keda-chart-version", "2.20.0")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "/charts/keda-2.20.0.tgz)")
}

func TestMissingPinsFailNamingWhatIsMissing(t *testing.T) {
	_, c := upstream(t, kedaIndex)
	cases := map[string]struct {
		args []string
		want string
	}{
		"chart version not listed": {[]string{"-keda-chart-version", "2.99.0"},
			"FAIL KEDA chart keda 2.99.0: " + "%s/charts/index.yaml does not list keda 2.99.0 (listed first: 2.22.0, 2.21.0, 2.20.0); set kedaChartVersion to a version it lists"},
		"chart archive gone": {[]string{"-keda-chart-version", "2.22.0"},
			"lists keda 2.22.0, but its archive does not download: %s/kedacore/charts/releases/download/v2.22.0/keda-2.22.0.tgz answered 404 Not Found"},
		"no such release": {[]string{"-agent-sandbox-version", "v9.9.9"},
			"FAIL agent-sandbox release manifest v9.9.9: %s/kubernetes-sigs/agent-sandbox/releases/download/v9.9.9/sandbox-with-extensions.yaml answered 404 Not Found; check that v9.9.9 is a release"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := strings.TrimSuffix(c.ChartRepo, "/charts")
			code, out := runCheck(t, c, tc.args...)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, strings.ReplaceAll(tc.want, "%s", base))
			assert.Contains(t, out, "1/2 pinned artifacts found\n")
		})
	}
}

func TestAnIndexWithoutTheChartOrNotAnIndexFails(t *testing.T) {
	_, c := upstream(t, func(string) string { return "apiVersion: v1\nentries:\n  other: []\n" })
	code, out := runCheck(t, c)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "lists no chart named \"keda\"")

	_, c = upstream(t, func(string) string { return "<html>not yaml: [" })
	code, out = runCheck(t, c)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "is not a Helm repository index")
}

// Without a connection the check fails, says so, and does not claim that anything is missing.
func TestNoConnectionIsSaidPlainly(t *testing.T) {
	srv, c := upstream(t, kedaIndex)
	srv.Close()
	code, out := runCheck(t, c)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL KEDA chart keda 2.21.0: cannot reach 127.0.0.1:")
	assert.NotContains(t, out, "check that v1.0.10 is a release", "an unreachable host says nothing about the release")
	assert.Contains(t, out, "This check needs the internet (through HTTPS_PROXY if you use one); `pulumi up` downloads from the same place, so it would fail the same way")
	assert.Contains(t, out, "0/2 pinned artifacts found; 2 could not be looked up (no connection), so none is known to be missing")

	c.ChartRepo = "https://kedacore.invalid/charts"
	c.Client = &http.Client{}
	r := c.KedaChart(context.Background(), "2.21.0")
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), "cannot reach kedacore.invalid (the name does not resolve: is this machine offline?)")
}

func TestArgumentsAreFlagsOnly(t *testing.T) {
	_, c := upstream(t, kedaIndex)
	code, out := runCheck(t, c, "2.21.0")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "checkpins takes no arguments, only flags")
}

// --help describes the command and its flags, and is not an error.
func TestHelpDescribesTheCheck(t *testing.T) {
	code, out := runCheck(t, Checker{}, "--help")
	assert.Equal(t, 0, code, out)
	for _, want := range []string{"usage: go run ./checkpins [flags]", "kedacore/keda Helm chart", "agent-sandbox release manifest", "-keda-chart-version string", "-agent-sandbox-version string"} {
		assert.Contains(t, out, want)
	}
}
