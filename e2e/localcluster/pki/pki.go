// Package pki makes the keys and certificates of one local control plane
// (pki.go), the real nodes' own (nodes.go), and the kubeconfigs and TLS
// configurations its clients use them by (kubeconfig.go).
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// PKI is the set of keys and certificates one local control plane uses. Every
// credential is made fresh for each state directory and never leaves it.
type PKI struct {
	dir string
}

// New is the PKI kept in dir; Generate makes it.
func New(dir string) *PKI { return &PKI{dir: dir} }

type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

type leaf struct {
	name     string // file stem: <name>.crt, <name>.key
	cn       string
	orgs     []string
	dnsNames []string
	ips      []net.IP
	server   bool
	client   bool
}

// CA file names inside the state directory.
const (
	ClusterCA     = "ca"             // signs the API server's cert and every client cert
	FrontProxyCA  = "front-proxy-ca" // signs the aggregator's client cert
	KEDACA        = "keda-ca"        // KEDA's gRPC and the metrics adapter's serving cert
	SAKeyFile     = "sa.key"
	SAPubFile     = "sa.pub"
	certValidity  = 7 * 24 * time.Hour
	APIServerCert = "apiserver"
)

// Path is where the PKI keeps the file name.
func (p *PKI) Path(name string) string { return filepath.Join(p.dir, name) }

// generate writes every key and certificate the control plane needs.
func (p *PKI) Generate() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	loop := []net.IP{net.ParseIP("127.0.0.1")}
	cas := map[string][]leaf{
		ClusterCA: {
			{name: APIServerCert, cn: "kube-apiserver", server: true,
				dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
				// The kubernetes Service's address, and the host's on the pod network.
				ips: append(loop, net.ParseIP(host.KubernetesServiceIP), net.ParseIP(host.PodAddress))},
			// system:masters: the operator of this local cluster, and the upstream
			// controllers whose RBAC would come from charts we do not install.
			{name: "admin", cn: "local-admin", orgs: []string{"system:masters"}, client: true},
			// The built-in identities, so the built-in RBAC bindings apply.
			{name: "controller-manager", cn: "system:kube-controller-manager", client: true},
			{name: "scheduler", cn: "system:kube-scheduler", client: true},
		},
		FrontProxyCA: {
			{name: "front-proxy-client", cn: "front-proxy-client", client: true},
		},
		KEDACA: {
			// One leaf for KEDA: the operator's gRPC server, the adapter's gRPC
			// client, and the adapter's HTTPS server behind the APIService.
			{name: "keda", cn: "keda", server: true, client: true,
				dnsNames: []string{"localhost", "keda-operator.keda.svc", "keda-operator.keda.svc.cluster.local",
					"keda-metrics-apiserver.keda.svc", "keda-metrics-apiserver.keda.svc.cluster.local"},
				ips: loop},
		},
	}
	for caName, leaves := range cas {
		ca, err := p.newCA(caName)
		if err != nil {
			return err
		}
		for _, l := range leaves {
			if err := p.newLeaf(ca, l); err != nil {
				return err
			}
		}
	}
	return p.serviceAccountKey()
}

func (p *PKI) newCA(name string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "warm-pool local " + name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	if err := writePEM(p.Path(name+".crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, writeKey(p.Path(name+".key"), key)
}

func (p *PKI) newLeaf(ca *certAuthority, l leaf) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: l.cn, Organization: l.orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     l.dnsNames,
		IPAddresses:  l.ips,
	}
	if l.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if l.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return err
	}
	if err := writePEM(p.Path(l.name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.Path(l.name+".key"), key)
}

// serviceAccountKey is the key pair the API server signs ServiceAccount tokens
// with (TokenRequest) and the controller-manager's token controller uses.
func (p *PKI) serviceAccountKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writePEM(p.Path(SAKeyFile), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(p.Path(SAPubFile), "PUBLIC KEY", pub)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}
