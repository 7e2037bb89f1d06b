package framework

import (
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is a container registry on loopback (go-containerregistry's, in this process): a
// stack publishes the exporter's image to it and a real node's containerd pulls from it (over
// HTTP: containerd takes a loopback host with a port as plain HTTP). Anyone reads; only the user
// in DockerConfig's config.json writes, so a push shows the stack read the machine's docker
// credentials.
type Registry struct {
	// Host is "127.0.0.1:<port>".
	Host string
	// DockerConfig is a directory for DOCKER_CONFIG whose config.json holds the push credentials.
	DockerConfig string

	server *http.Server
	mu     sync.Mutex
	reads  []string // paths of the manifests served to a GET
	pushes []string // paths of the manifests written
}

const (
	registryUser     = "e2e-publisher"
	registryPassword = "e2e-registry-secret"
)

// StartRegistry serves a registry on 127.0.0.1 until the test ends.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Registry{Host: ln.Addr().String(), DockerConfig: t.TempDir()}
	auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + registryPassword))
	config := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, r.Host, auth)
	if err := os.WriteFile(filepath.Join(r.DockerConfig, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		manifest := strings.Contains(req.URL.Path, "/manifests/")
		switch req.Method {
		case http.MethodGet, http.MethodHead:
			if manifest && req.Method == http.MethodGet {
				r.record(&r.reads, req.URL.Path)
			}
		default:
			if u, p, ok := req.BasicAuth(); !ok || u != registryUser || p != registryPassword {
				w.Header().Set("WWW-Authenticate", `Basic realm="e2e"`)
				http.Error(w, "pushing needs the registry's credentials", http.StatusUnauthorized)
				return
			}
			if manifest && req.Method == http.MethodPut {
				r.record(&r.pushes, req.URL.Path)
			}
		}
		reg.ServeHTTP(w, req)
	})}
	go r.server.Serve(ln) //nolint:errcheck // returns when Close is called
	t.Cleanup(func() { r.server.Close() })
	return r
}

func (r *Registry) record(list *[]string, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*list = append(*list, strings.TrimPrefix(path, "/v2/"))
}

// ManifestReads are the manifests the registry served to a GET, as "<repository>/manifests/<tag or digest>".
func (r *Registry) ManifestReads() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reads...)
}

// ManifestPushes are the manifests written to it, as "<repository>/manifests/<tag or digest>".
func (r *Registry) ManifestPushes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.pushes...)
}
