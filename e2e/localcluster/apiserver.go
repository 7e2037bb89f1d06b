package localcluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// apiServerSettings is everything the API server's flags depend on.
type apiServerSettings struct {
	Binary  string
	EtcdURL string
	// Address it listens on and advertises: loopback, or with real nodes the
	// host's pod-network address (pods reach it as the kubernetes Service).
	Address string
	Port    int
	PKI     *pki
	// WithKubelets: real nodes run kubelets it must reach (exec, logs) and a
	// kube-proxy that needs the kubernetes Service's endpoints.
	WithKubelets bool
}

// apiServerSpec is kube-apiserver; ready when /readyz answers an admin.
func apiServerSpec(s apiServerSettings) processSpec {
	return processSpec{
		name: "kube-apiserver", binary: s.Binary, args: apiServerFlags(s),
		ready: readiness{url: s.url() + "/readyz", clientUser: "admin", timeout: 120 * time.Second},
	}
}

// url is where clients reach the API server.
func (s apiServerSettings) url() string { return "https://" + s.Address + ":" + strconv.Itoa(s.Port) }

// apiServerFlags is the API server's command line: every flag, with or
// without kubelets, is here.
func apiServerFlags(s apiServerSettings) []string {
	p := s.PKI
	flags := []string{
		"--etcd-servers=" + s.EtcdURL,
		"--bind-address=" + s.Address, "--advertise-address=" + s.Address,
		"--secure-port=" + strconv.Itoa(s.Port),
		"--tls-cert-file=" + p.path(apiServerCert+".crt"), "--tls-private-key-file=" + p.path(apiServerCert+".key"),
		"--client-ca-file=" + p.path(clusterCA+".crt"),
		// Node: each kubelet may touch only its own node and its pods' objects.
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		// The default admission chain (NamespaceLifecycle, ServiceAccount,
		// RuntimeClass, PodSecurity, ...) stays on; nothing is disabled.
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.path(saPubFile),
		"--service-account-signing-key-file=" + p.path(saKeyFile),
		"--service-cluster-ip-range=" + host.ServiceCIDR,
		// Aggregation: the front proxy's own CA and client cert, or aggregated
		// calls (KEDA's external metrics) arrive anonymous.
		"--requestheader-client-ca-file=" + p.path(frontProxyCA+".crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.path("front-proxy-client.key"),
		// The endpoint resolver rejects ExternalName services, which is how the
		// APIService reaches the adapter on loopback.
		"--enable-aggregator-routing=false",
		"--allow-privileged=true", "--profiling=false",
		"--v=1",
	}
	if !s.WithKubelets {
		// No kube-proxy would use the kubernetes Service's endpoints, and a
		// loopback advertise address is rejected there.
		return append(flags, "--endpoint-reconciler-type=none")
	}
	return append(flags,
		"--kubelet-client-certificate="+p.path(apiServerKubeletClient+".crt"),
		"--kubelet-client-key="+p.path(apiServerKubeletClient+".key"),
		"--kubelet-certificate-authority="+p.path(clusterCA+".crt"),
		"--kubelet-preferred-address-types=InternalIP",
	)
}

// writeKubeconfig writes a self-contained kubeconfig for user of server
// (certificates embedded), so it can be handed to Pulumi as contents as well
// as a path; its directory is made when missing (kube-proxy's is new).
func writeKubeconfig(p *pki, server, path, user string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(p.path(name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read(clusterCA + ".crt")
	if err != nil {
		return err
	}
	crt, err := read(user + ".crt")
	if err != nil {
		return err
	}
	key, err := read(user + ".key")
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: localcluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: localcluster
  context:
    cluster: localcluster
    user: %s
current-context: localcluster
`, server, ca, user, crt, key, user)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(cfg), 0o600)
}

func clientTLS(p *pki, user string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(p.path(user+".crt"), p.path(user+".key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(p.path(clusterCA + ".crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
