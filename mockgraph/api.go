package mockgraph

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ClusterAPI says how the mocked cluster's endpoint answers: a new EKS cluster's endpoint may
// not answer at first, and Auto Mode may add the RuntimeClass isolated-sandbox only after a while.
type ClusterAPI struct {
	// HealthzFailures is how many GET /healthz answer 503 before the endpoint answers 200.
	HealthzFailures int
	// RuntimeClassMisses is how many reads of a RuntimeClass answer 404 before it exists
	// (a RuntimeClass in Absent never exists).
	RuntimeClassMisses int
}

// Requests counts what the mocked cluster's endpoint was asked.
type Requests struct {
	Healthz, RuntimeClass int
}

// apiServer is the HTTPS server behind the mocked cluster's endpoint.
type apiServer struct {
	rec    *Recorder
	server *httptest.Server

	mu       sync.Mutex
	requests Requests
}

// clusterAPI starts the endpoint on first use.
func (r *Recorder) clusterAPI() *apiServer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.api == nil {
		a := &apiServer{rec: r}
		a.server = httptest.NewTLSServer(http.HandlerFunc(a.serve))
		r.api = a
	}
	return r.api
}

// APIRequests returns what the mocked cluster's endpoint has been asked (zero when no cluster was made).
func (r *Recorder) APIRequests() Requests {
	r.mu.Lock()
	a := r.api
	r.mu.Unlock()
	if a == nil {
		return Requests{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// Close stops the mocked cluster's endpoint and registry, those that were started.
func (r *Recorder) Close() {
	r.mu.Lock()
	a, reg := r.api, r.reg
	r.mu.Unlock()
	if a != nil {
		a.server.Close()
	}
	if reg != nil {
		reg.server.Close()
	}
}

const runtimeClassesPath = "/apis/node.k8s.io/v1/runtimeclasses/"

func (a *apiServer) serve(w http.ResponseWriter, req *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case req.Method == http.MethodGet && req.URL.Path == "/healthz":
		a.requests.Healthz++
		if a.requests.Healthz <= a.rec.API.HealthzFailures {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	case req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, runtimeClassesPath):
		a.requests.RuntimeClass++
		name := strings.TrimPrefix(req.URL.Path, runtimeClassesPath)
		if req.Header.Get("Authorization") != "Bearer "+mockToken {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if a.rec.Absent["kubernetes:node.k8s.io/v1:RuntimeClass/"+name] || a.requests.RuntimeClass <= a.rec.API.RuntimeClassMisses {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": map[string]any{"name": name}, "handler": name,
		})
	default:
		http.NotFound(w, req)
	}
}

const mockToken = "mockgraph-token"

// kubeconfig is the endpoint's kubeconfig in the shape pulumi-eks's kubeconfigJson has (one
// cluster with server and certificate-authority-data), with a token instead of the
// `aws eks get-token` exec plugin.
func (a *apiServer) kubeconfig() (string, error) {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.server.Certificate().Raw})
	b, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "aws",
		"clusters": []any{map[string]any{"name": "kubernetes", "cluster": map[string]any{
			"server": a.server.URL, "certificate-authority-data": base64.StdEncoding.EncodeToString(ca),
		}}},
		"contexts": []any{map[string]any{"name": "aws", "context": map[string]any{"cluster": "kubernetes", "user": "aws"}}},
		"users":    []any{map[string]any{"name": "aws", "user": map[string]any{"token": mockToken}}},
	})
	return string(b), err
}
