package mockgraph

import (
	"encoding/base64"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// The account and credentials of the mocked ECR: a mocked aws:ecr Repository lives in a real
// registry on loopback (its repositoryUrl points there), and getAuthorizationToken answers with
// the only credentials that registry lets write.
const (
	MockAccountID   = "123456789012"
	MockECRUser     = "AWS"
	MockECRPassword = "mock-ecr-token"
)

// registryServer is the mocked ECR: go-containerregistry's registry, reads open, writes only
// with MockECRUser's credentials, each manifest write recorded.
type registryServer struct {
	server *httptest.Server

	mu        sync.Mutex
	manifests []string // "<repository>/manifests/<tag or digest>" of every manifest written
}

func (r *Recorder) registry() *registryServer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reg == nil {
		s := &registryServer{}
		reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodGet && req.Method != http.MethodHead {
				if u, p, ok := req.BasicAuth(); !ok || u != MockECRUser || p != MockECRPassword {
					w.Header().Set("WWW-Authenticate", `Basic realm="mock-ecr"`)
					http.Error(w, "ECR needs the authorization token to push", http.StatusUnauthorized)
					return
				}
				if req.Method == http.MethodPut && strings.Contains(req.URL.Path, "/manifests/") {
					s.mu.Lock()
					s.manifests = append(s.manifests, strings.TrimPrefix(req.URL.Path, "/v2/"))
					s.mu.Unlock()
				}
			}
			reg.ServeHTTP(w, req)
		}))
		r.reg = s
	}
	return r.reg
}

// RegistryHost is the mocked ECR's host:port (a registry on loopback, started on first use).
func (r *Recorder) RegistryHost() string {
	return strings.TrimPrefix(r.registry().server.URL, "http://")
}

// PushedManifests are the manifests written to the mocked ECR, as
// "<repository>/manifests/<tag or digest>", in order.
func (r *Recorder) PushedManifests() []string {
	r.mu.Lock()
	s := r.reg
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.manifests...)
}

// ecrRepositoryOutputs are what AWS returns for a repository: its URL (here, in the mocked ECR).
func (r *Recorder) ecrRepositoryOutputs(outputs resource.PropertyMap) {
	name := ""
	if v, ok := outputs["name"]; ok && v.IsString() {
		name = v.StringValue()
	}
	outputs["registryId"] = resource.NewProperty(MockAccountID)
	outputs["repositoryUrl"] = resource.NewProperty(r.RegistryHost() + "/" + name)
}

// ecrAuthorizationToken answers aws:ecr/getAuthorizationToken as ECR does.
func (r *Recorder) ecrAuthorizationToken() resource.PropertyMap {
	return resource.PropertyMap{
		"userName":           resource.NewProperty(MockECRUser),
		"password":           resource.NewProperty(MockECRPassword),
		"authorizationToken": resource.NewProperty(base64.StdEncoding.EncodeToString([]byte(MockECRUser + ":" + MockECRPassword))),
		"proxyEndpoint":      resource.NewProperty(r.registry().server.URL),
		"expiresAt":          resource.NewProperty("2099-01-01T00:00:00Z"),
	}
}
