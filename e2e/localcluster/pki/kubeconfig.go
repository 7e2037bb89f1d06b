package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// WriteKubeconfig writes a self-contained kubeconfig for user of server
// (certificates embedded), so it can be handed to Pulumi as contents as well
// as a path; its directory is made when missing (kube-proxy's is new).
func WriteKubeconfig(p *PKI, server, path, user string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(p.Path(name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read(ClusterCA + ".crt")
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

func ClientTLS(p *PKI, user string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(p.Path(user+".crt"), p.Path(user+".key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(p.Path(ClusterCA + ".crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
