package exporter

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// claimsPath is the one resource the exporter reads; its Role grants get and
// list on it and nothing else.
const claimsPath = "/apis/" + ClaimsGroup + "/" + ClaimsVersion + "/namespaces/%s/" + ClaimsResource

// Accept header asking for metadata only: the API server drops spec and status
// from each item, which is all a count can do without.
const (
	acceptMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	acceptJSON         = "application/json"
)

// maxPageBytes caps one list response. A metadata-only page of 500 claims is
// about 0.6 MB; the decode holds the body about three times over, so a page at
// the cap stays far inside the prebuilt image's 128 Mi memory limit, where an
// uncapped 50 MB body took 188 MB.
const maxPageBytes = 4 << 20

// errPageTooLarge: the response passed maxPageBytes; the counter asks again
// with a smaller limit.
var errPageTooLarge = errors.New("list response is larger than the exporter's cap")

// apiClient makes authenticated list requests to the Kubernetes API.
type apiClient struct {
	base         *url.URL
	tokenFile    string
	http         *http.Client
	maxPageBytes int64
}

func newAPIClient(cfg Config) (*apiClient, error) {
	base, err := url.Parse(strings.TrimRight(cfg.APIURL, "/"))
	if err != nil || base.Host == "" || (base.Scheme != "https" && base.Scheme != "http") {
		return nil, fmt.Errorf("API URL %q is not an http(s) URL with a host", cfg.APIURL)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if base.Scheme == "https" && cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", cfg.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &apiClient{
		base:      base,
		tokenFile: cfg.TokenFile,
		http: &http.Client{
			Transport: transport,
			// Requests are bounded by the read's context; this is only a backstop.
			Timeout: 5 * time.Minute,
			// The API server never redirects a list. A redirect is a proxy in the
			// way: report it rather than follow it with the token.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		maxPageBytes: maxPageBytes,
	}, nil
}

// listPage is the part of a list response a count needs.
type listPage struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	// Items stays raw so that a present "items": null (what the API server
	// sends for an empty list) is told apart from a body with no items at all.
	Items rawItems `json:"items"`
	// count is the number of items on this page.
	count int64
	// date is the API server's clock when it answered (its Date header; zero if absent).
	date time.Time
}

// itemMeta is what the arrival signal reads of each claim in a metadata-only list.
type itemMeta struct {
	Metadata struct {
		UID               string    `json:"uid"`
		CreationTimestamp time.Time `json:"creationTimestamp"`
	} `json:"metadata"`
}

// rawItems is the undecoded "items" of a page: the part of the body they span, not a copy (a
// json.RawMessage copied each page's 0.6 MB). It is only valid while list holds the body.
type rawItems []byte

func (r *rawItems) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// StatusError is a non-200 answer from the API server.
type StatusError struct {
	Code    int
	Message string // the API's Status message, or the start of the body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("API answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// list fetches one page of the claims in namespace. The token is read from its file here, on
// every request, so a token the kubelet has rotated is picked up at once. With metas non-nil the
// items are decoded into *metas (its backing array reused), for their UIDs and creation times.
func (c *apiClient) list(ctx context.Context, namespace string, query url.Values, accept string, metas *[]itemMeta) (*listPage, error) {
	token, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(token))
	if tok == "" {
		return nil, fmt.Errorf("token file %s is empty", c.tokenFile)
	}
	u := *c.base
	u.Path += fmt.Sprintf(claimsPath, namespace) // unescaped: url.URL.String escapes it
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "claim-exporter")

	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error names the URL and the cause, never the request headers;
		// the URL loses its query, whose continue token encodes a claim's name.
		return nil, withoutQuery(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// An error page may echo the request; the query goes before the
		// message is cut short, so no part of a continue token survives.
		return nil, &StatusError{Code: resp.StatusCode, Message: statusMessage(resp.Body, u.RawQuery, query.Get("continue"))}
	}
	// A page is held whole to decode it; reusing the buffer keeps a scrape of
	// many pages from allocating each one afresh.
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	buf.Reset()
	if resp.ContentLength > c.maxPageBytes {
		return nil, fmt.Errorf("%w (%d bytes announced, cap %d)", errPageTooLarge, resp.ContentLength, c.maxPageBytes)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, c.maxPageBytes+1)); err != nil {
		return nil, fmt.Errorf("read list response: %w", withoutQuery(err))
	}
	if int64(buf.Len()) > c.maxPageBytes {
		return nil, fmt.Errorf("%w (more than %d bytes)", errPageTooLarge, c.maxPageBytes)
	}
	var page listPage
	if err := json.Unmarshal(buf.Bytes(), &page); err != nil {
		return nil, fmt.Errorf("decode list response: %w", err)
	}
	// A 200 that is not a list (a proxy's page, an empty object) must not be
	// read as zero claims.
	if !strings.HasSuffix(page.Kind, "List") || len(page.Items) == 0 {
		return nil, fmt.Errorf("API answered 200 but not with a list (kind %q, items present: %t)", page.Kind, len(page.Items) != 0)
	}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		page.date = d
	}
	switch {
	case metas != nil:
		// Zeroed first: a reused element must not lend an item a field it lacks.
		clear((*metas)[:cap(*metas)])
		*metas = (*metas)[:0]
		if string(page.Items) != "null" {
			if err := json.Unmarshal(page.Items, metas); err != nil {
				return nil, fmt.Errorf("decode list items: %w", err)
			}
		}
		page.count = int64(len(*metas))
	case string(page.Items) != "null":
		// Items decode into empty structs: each is still validated, none kept.
		var items []struct{}
		if err := json.Unmarshal(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode list items: %w", err)
		}
		page.count = int64(len(items))
	}
	page.Items = nil // the body goes back to the pool
	return &page, nil
}

// statusMessage extracts the message of a Kubernetes Status body, or the start
// of any other body, short enough for one log line, with the request's query
// and continue token taken out.
func statusMessage(body io.Reader, rawQuery, token string) string {
	b, _ := io.ReadAll(io.LimitReader(body, 4096))
	var st struct {
		Message string `json:"message"`
	}
	msg := string(b)
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	msg = redactText(msg, rawQuery, token)
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// withoutQuery drops the query string from the URL a *url.Error names, so a
// continue token (it encodes the last claim's name) never reaches a log line
// or stale_reason, which /demand serves without authentication.
func withoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.ForceQuery, u.Fragment = "", false, ""
		return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
	}
	return &url.Error{Op: ue.Op, URL: "(unparsable URL)", Err: ue.Err}
}

// redactToken removes a continue token from an error's text wherever it
// appears (a proxy's error page may echo the request line).
func redactToken(err error, token string) error {
	if err == nil || token == "" {
		return err
	}
	msg := err.Error()
	clean := redactText(msg, "", token)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// redactText replaces a request's query and its continue token (in each of
// its spellings) in text.
func redactText(text, rawQuery, token string) string {
	if rawQuery != "" {
		text = strings.ReplaceAll(text, rawQuery, "<query>")
	}
	if token != "" {
		for _, form := range []string{token, url.QueryEscape(token), url.PathEscape(token)} {
			text = strings.ReplaceAll(text, form, "<continue-token>")
		}
	}
	return text
}

// redactedError keeps the cause for errors.Is/As (isExpired) but prints the
// redacted text.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// isExpired reports a continue token the API server no longer honours (410).
func isExpired(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusGone
}
