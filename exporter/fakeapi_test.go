package exporter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI is an httptest Kubernetes API server for sandboxclaims that speaks
// the list protocol the real one does: limit, continue (a token that resumes
// after the last key returned), metadata.remainingItemCount (only when there
// is no selector and items remain, computed as the real apiserver does),
// labelSelector filtering, and the PartialObjectMetadataList form when the
// Accept header asks for it. Errors are Kubernetes Status objects. It serves
// the claims of any namespace (an empty list for one without claims, as the
// real server does); namespace is the one the helpers without one use.
type fakeAPI struct {
	*httptest.Server
	namespace string

	mu            sync.Mutex
	claims        map[string][]fakeClaim // namespace -> claims sorted by name, like etcd keys
	rv            int
	clock         time.Time // when set: the Date header and new claims' creationTimestamp; else the real clock
	token         string    // when set, any other bearer token gets 401
	omitRemaining bool      // behave like a server that never sets remainingItemCount
	// fault, when set, may answer request number n (1-based) itself.
	fault    func(w http.ResponseWriter, r *http.Request, n int) bool
	requests []recordedRequest

	bytesOut atomic.Int64 // response body bytes written
}

type recordedRequest struct {
	Path   string
	Query  url.Values
	Accept string
	Auth   string
}

type fakeClaim struct {
	name   string
	labels map[string]string
	full   []byte // the object as a full list item
	meta   []byte // the object as a PartialObjectMetadata item
}

func newFakeAPI(t testing.TB, namespace string) *fakeAPI {
	f := &fakeAPI{namespace: namespace, rv: 1000, claims: map[string][]fakeClaim{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// newFakeAPITLS serves HTTPS with a certificate of its own CA (f.Certificate()).
func newFakeAPITLS(t testing.TB, namespace string) *fakeAPI {
	f := &fakeAPI{namespace: namespace, rv: 1000, claims: map[string][]fakeClaim{}}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// addClaims adds n claims named <prefix>-<i> with the given labels to the
// default namespace, created now (the fake's clock).
func (f *fakeAPI) addClaims(prefix string, n int, labels map[string]string) {
	f.addClaimsIn(f.namespace, prefix, n, labels, time.Time{})
}

// addClaimsIn adds n claims to namespace ns, created at created (zero: now).
func (f *fakeAPI) addClaimsIn(ns, prefix string, n int, labels map[string]string, created time.Time) {
	f.addClaimsFunc(ns, prefix, n, labels, func(int) time.Time { return created })
}

// addClaimsFunc adds n claims to namespace ns, claim i created at created(i) (zero: now).
func (f *fakeAPI) addClaimsFunc(ns, prefix string, n int, labels map[string]string, created func(i int) time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.rv++
		at := created(i)
		if at.IsZero() {
			at = f.nowLocked()
		}
		f.claims[ns] = append(f.claims[ns], makeClaim(fmt.Sprintf("%s-%05d", prefix, i), ns, f.rv, labels, at))
	}
	sort.Slice(f.claims[ns], func(i, j int) bool { return f.claims[ns][i].name < f.claims[ns][j].name })
}

// deleteClaims removes the first n claims (by name) of the default namespace.
func (f *fakeAPI) deleteClaims(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims[f.namespace] = append([]fakeClaim(nil), f.claims[f.namespace][n:]...)
	f.rv++
}

// deletePrefix removes the claims of namespace ns whose names start with prefix.
func (f *fakeAPI) deletePrefix(ns, prefix string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var kept []fakeClaim
	for _, c := range f.claims[ns] {
		if !strings.HasPrefix(c.name, prefix) {
			kept = append(kept, c)
		}
	}
	f.claims[ns] = kept
	f.rv++
}

// setClock sets the fake's clock (its Date header, new claims' creation time).
func (f *fakeAPI) setClock(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = at
}

func (f *fakeAPI) nowLocked() time.Time {
	if f.clock.IsZero() {
		return time.Now()
	}
	return f.clock
}

func (f *fakeAPI) setFault(fn func(w http.ResponseWriter, r *http.Request, n int) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fn
}

func (f *fakeAPI) recorded() []recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRequest(nil), f.requests...)
}

// makeClaim renders a claim with the metadata a real one carries, including
// managedFields, which make up most of its size.
func makeClaim(name, ns string, rv int, labels map[string]string, created time.Time) fakeClaim {
	lb, _ := json.Marshal(labels)
	meta := fmt.Sprintf(`{"name":%q,"namespace":%q,"uid":"6f1c2a9e-%08d-4b7e-9c1d-3a5f7e2b8c%02d","resourceVersion":"%d","generation":1,`+
		`"creationTimestamp":%q,"labels":%s,"managedFields":[`+
		`{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"extensions.agents.x-k8s.io/v1beta1","time":"2026-11-08T01:40:00Z","fieldsType":"FieldsV1",`+
		`"fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/part-of":{},"f:warm-pool-autoscaling-keda/created-by":{}}},"f:spec":{".":{},"f:warmPoolRef":{".":{},"f:name":{}}}}},`+
		`{"manager":"agent-sandbox-controller","operation":"Update","apiVersion":"extensions.agents.x-k8s.io/v1beta1","time":"2026-11-08T01:40:01Z","fieldsType":"FieldsV1",`+
		`"fieldsV1":{"f:status":{".":{},"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:sandbox":{".":{},"f:name":{}}}},"subresource":"status"}]}`,
		name, ns, rv%100000000, rv%100, rv, created.UTC().Format(time.RFC3339), lb)
	full := `{"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxClaim","metadata":` + meta +
		`,"spec":{"warmPoolRef":{"name":"warm-pool"}},"status":{"conditions":[{"type":"Ready","status":"True","reason":"SandboxReady","message":"","observedGeneration":1,"lastTransitionTime":"2026-11-08T01:39:12Z"}],"sandbox":{"name":"warm-pool-x7k2p"}}}`
	pom := `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":` + meta + `}`
	return fakeClaim{name: name, labels: labels, full: []byte(full), meta: []byte(pom)}
}

type continueToken struct {
	RV    int    `json:"rv"`
	Start string `json:"start"`
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, recordedRequest{Path: r.URL.Path, Query: r.URL.Query(), Accept: r.Header.Get("Accept"), Auth: r.Header.Get("Authorization")})
	if f.fault != nil && f.fault(w, r, len(f.requests)) {
		return
	}
	const prefix, suffix = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/", "/sandboxclaims"
	ns, ok := strings.CutPrefix(r.URL.Path, prefix)
	ns, ok2 := strings.CutSuffix(ns, suffix)
	if r.Method != http.MethodGet || !ok || !ok2 || ns == "" || strings.Contains(ns, "/") {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	claims := f.claims[ns]
	if !f.clock.IsZero() {
		w.Header().Set("Date", f.clock.UTC().Format(http.TimeFormat))
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	q := r.URL.Query()
	limit := 0
	if s := q.Get("limit"); s != "" {
		var err error
		if limit, err = strconv.Atoi(s); err != nil || limit < 0 {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid limit")
			return
		}
	}
	sel := q.Get("labelSelector")
	selReqs := parseSelector(sel)
	start, rv := "", f.rv
	if c := q.Get("continue"); c != "" {
		var tok continueToken
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || json.Unmarshal(b, &tok) != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "continue key is not valid")
			return
		}
		start, rv = tok.Start, tok.RV
	}

	// The key range from start, then the selector, as the apiserver does.
	// Indexes, not copies: the benchmarks measure the exporter, not this.
	from := sort.Search(len(claims), func(i int) bool { return claims[i].name >= start })
	inRange := len(claims) - from
	var page []int
	hasMore := false
	for i := from; i < len(claims); i++ {
		if !matchesSelector(claims[i].labels, selReqs) {
			continue
		}
		if limit > 0 && len(page) == limit {
			hasMore = true
			break
		}
		page = append(page, i)
	}

	metadataOnly := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList")
	var b bytes.Buffer
	if metadataOnly {
		b.WriteString(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{`)
	} else {
		b.WriteString(`{"kind":"SandboxClaimList","apiVersion":"extensions.agents.x-k8s.io/v1beta1","metadata":{`)
	}
	fmt.Fprintf(&b, `"resourceVersion":"%d"`, rv)
	if hasMore {
		tb, _ := json.Marshal(continueToken{RV: rv, Start: claims[page[len(page)-1]].name + "\x00"})
		fmt.Fprintf(&b, `,"continue":%q`, base64.RawURLEncoding.EncodeToString(tb))
		if sel == "" && !f.omitRemaining {
			// storage.PrepareContinueToken: items in the key range minus the limit.
			fmt.Fprintf(&b, `,"remainingItemCount":%d`, inRange-limit)
		}
	}
	// An empty page is "items": null, as the real API server sends it
	// (measured on kube-apiserver v1.36.3), not [].
	if len(page) == 0 {
		b.WriteString(`},"items":null}` + "\n")
		w.Header().Set("Content-Type", "application/json")
		n, _ := w.Write(b.Bytes())
		f.bytesOut.Add(int64(n))
		return
	}
	b.WriteString(`},"items":[`)
	w.Header().Set("Content-Type", "application/json")
	written := 0
	write := func(p []byte) {
		n, _ := w.Write(p)
		written += n
	}
	write(b.Bytes())
	for j, i := range page {
		if j > 0 {
			write([]byte{','})
		}
		if metadataOnly {
			write(claims[i].meta)
		} else {
			write(claims[i].full)
		}
	}
	write([]byte("]}\n"))
	f.bytesOut.Add(int64(written))
}

// selectorReq is one requirement of a label selector, in the equality and
// existence forms the exporter's configuration uses ("k=v", "k==v", "k!=v",
// "k", comma-separated).
type selectorReq struct {
	key, value string
	op         string // "=", "!=" or "exists"
}

func parseSelector(sel string) []selectorReq {
	var reqs []selectorReq
	for _, req := range strings.Split(sel, ",") {
		switch {
		case req == "":
		case strings.Contains(req, "!="):
			k, v, _ := strings.Cut(req, "!=")
			reqs = append(reqs, selectorReq{k, v, "!="})
		case strings.Contains(req, "="):
			k, v, _ := strings.Cut(strings.Replace(req, "==", "=", 1), "=")
			reqs = append(reqs, selectorReq{k, v, "="})
		default:
			reqs = append(reqs, selectorReq{req, "", "exists"})
		}
	}
	return reqs
}

func matchesSelector(labels map[string]string, reqs []selectorReq) bool {
	for _, r := range reqs {
		got, ok := labels[r.key]
		switch {
		case r.op == "!=" && ok && got == r.value,
			r.op == "=" && (!ok || got != r.value),
			r.op == "exists" && !ok:
			return false
		}
	}
	return true
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`+"\n", msg, reason, code)
}
