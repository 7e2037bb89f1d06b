package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"
)

// Result is one pinned artifact and what its source answered.
type Result struct {
	Name string // what the pin is, e.g. "KEDA chart 2.21.0"
	URL  string // where it was looked for
	Err  error  // nil: it exists
	// Detail says what was found when Err is nil.
	Detail string
}

// Checker looks the pinned artifacts up where `pulumi up` will download them.
type Checker struct {
	Client *http.Client
	// ChartRepo is the Helm repository of the KEDA chart (its index.yaml is read).
	ChartRepo string
	ChartName string
	// ManifestURL is the agent-sandbox release asset of a version.
	ManifestURL func(version string) string
}

// maxIndexBytes bounds the Helm repository index read (kedacore's is a few hundred KB).
const maxIndexBytes = 32 << 20

// KedaChart checks that the repository's index lists the chart at version and that the archive
// it points to answers: what the Helm client behind helm/v4.Chart does on `pulumi up`.
func (c Checker) KedaChart(ctx context.Context, version string) Result {
	name := fmt.Sprintf("KEDA chart %s %s", c.ChartName, version)
	index := strings.TrimRight(c.ChartRepo, "/") + "/index.yaml"
	r := Result{Name: name, URL: index}
	body, err := c.get(ctx, index)
	if err != nil {
		r.Err = err
		return r
	}
	var doc struct {
		Entries map[string][]struct {
			Version string   `json:"version"`
			URLs    []string `json:"urls"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(body, &doc); err != nil {
		r.Err = fmt.Errorf("%s is not a Helm repository index: %v", index, err)
		return r
	}
	entries, ok := doc.Entries[c.ChartName]
	if !ok {
		r.Err = fmt.Errorf("%s lists no chart named %q", index, c.ChartName)
		return r
	}
	var newest []string
	for _, e := range entries {
		if e.Version != version {
			if len(newest) < 5 {
				newest = append(newest, e.Version)
			}
			continue
		}
		if len(e.URLs) == 0 {
			r.Err = fmt.Errorf("%s lists %s %s without a download URL", index, c.ChartName, version)
			return r
		}
		archive, err := resolve(c.ChartRepo, e.URLs[0])
		if err != nil {
			r.Err = fmt.Errorf("%s lists %s %s with the URL %q: %v", index, c.ChartName, version, e.URLs[0], err)
			return r
		}
		r.URL = archive
		if err := c.exists(ctx, archive); err != nil {
			r.Err = fmt.Errorf("%s lists %s %s, but its archive does not download: %w", index, c.ChartName, version, err)
			return r
		}
		r.Detail = fmt.Sprintf("listed in %s; its archive answers", index)
		return r
	}
	r.Err = fmt.Errorf("%s does not list %s %s (listed first: %s); set kedaChartVersion to a version it lists", index, c.ChartName, version, strings.Join(newest, ", "))
	return r
}

// AgentSandboxManifest checks that the release asset answers (HEAD, following GitHub's redirect).
func (c Checker) AgentSandboxManifest(ctx context.Context, version string) Result {
	u := c.ManifestURL(version)
	r := Result{Name: "agent-sandbox release manifest " + version, URL: u}
	if err := c.exists(ctx, u); err != nil {
		r.Err = err
		if !isUnreachable(err) {
			r.Err = fmt.Errorf("%w; check that %s is a release of kubernetes-sigs/agent-sandbox with the asset sandbox-with-extensions.yaml (set agentSandboxVersion to one that is)", err, version)
		}
		return r
	}
	r.Detail = "the release asset answers"
	return r
}

// resolve makes a chart URL from an index absolute (Helm allows URLs relative to the repository).
func resolve(repo, ref string) (string, error) {
	base, err := url.Parse(strings.TrimRight(repo, "/") + "/")
	if err != nil {
		return "", err
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", err
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("not an http(s) URL")
	}
	return u.String(), nil
}

func (c Checker) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return nil, unreachable(u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s answered %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIndexBytes))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", u, err)
	}
	return body, nil
}

// exists asks for u with HEAD, following redirects. A server that refuses HEAD (405, or 403 from
// a storage URL signed for GET) is asked again for the first byte only.
func (c Checker) exists(ctx context.Context, u string) error {
	status, err := c.status(ctx, http.MethodHead, u)
	if err != nil {
		return err
	}
	if status == http.StatusMethodNotAllowed || status == http.StatusForbidden {
		if status, err = c.status(ctx, http.MethodGet, u); err != nil {
			return err
		}
	}
	if status != http.StatusOK && status != http.StatusPartialContent {
		return fmt.Errorf("%s answered %d %s", u, status, http.StatusText(status))
	}
	return nil
}

func (c Checker) status(ctx context.Context, method, u string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, err
	}
	if method == http.MethodGet {
		req.Header.Set("Range", "bytes=0-0")
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return 0, unreachable(u, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// unreachableError is a failure to reach a host at all (no network, DNS, proxy, TLS), as opposed
// to an answer that the artifact is missing.
type unreachableError struct {
	host, hint string
	err        error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s%s: %v. This check needs the internet (through HTTPS_PROXY if you use one); "+
		"`pulumi up` downloads from the same place, so it would fail the same way", e.host, e.hint, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

func unreachable(u string, err error) error {
	host := u
	if p, perr := url.Parse(u); perr == nil {
		host = p.Host
	}
	hint := ""
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		hint = " (the name does not resolve: is this machine offline?)"
	}
	return &unreachableError{host: host, hint: hint, err: err}
}

// isUnreachable reports whether err is a failure to reach the host.
func isUnreachable(err error) bool {
	var u *unreachableError
	return errors.As(err, &u)
}
