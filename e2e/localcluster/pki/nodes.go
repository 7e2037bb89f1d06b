package pki

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// Certificates of the real nodes, all from the cluster CA (which the API
// server already trusts for clients, and is told to trust for kubelets'
// serving certificates with --kubelet-certificate-authority).
const APIServerKubeletClient = "apiserver-kubelet-client"

// loadCA reads a CA this pki generated.
func (p *PKI) loadCA(name string) (*certAuthority, error) {
	crtPEM, err := os.ReadFile(p.Path(name + ".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(p.Path(name + ".key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(crtPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("malformed CA files of " + name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, nil
}

// realNodeCerts makes the API server's kubelet client certificate, the
// kube-proxy's, and per node a kubelet client certificate (system:node:<name>
// in system:nodes, for the Node authorizer and NodeRestriction) and a serving
// certificate for the node's address.
func (p *PKI) RealNodeCerts(nodes []string) error {
	ca, err := p.loadCA(ClusterCA)
	if err != nil {
		return err
	}
	leaves := []leaf{
		// Bound to system:kubelet-api-admin (bootstrap): exec, logs, port-forward.
		{name: APIServerKubeletClient, cn: "kube-apiserver-kubelet-client", client: true},
		// The built-in binding system:node-proxier names this user.
		{name: "kube-proxy", cn: "system:kube-proxy", client: true},
	}
	for _, n := range nodes {
		leaves = append(leaves,
			leaf{name: n + "-client", cn: "system:node:" + n, orgs: []string{"system:nodes"}, client: true},
			leaf{name: n + "-serving", cn: n, server: true, dnsNames: []string{n}, ips: []net.IP{net.ParseIP(host.PodAddress)}},
		)
	}
	for _, l := range leaves {
		if err := p.newLeaf(ca, l); err != nil {
			return err
		}
	}
	return nil
}
