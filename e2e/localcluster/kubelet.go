package localcluster

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// Certificates of the real nodes, all from the cluster CA (which the API
// server already trusts for clients, and is told to trust for kubelets'
// serving certificates with --kubelet-certificate-authority).
const apiServerKubeletClient = "apiserver-kubelet-client"

// loadCA reads a CA this pki generated.
func (p *pki) loadCA(name string) (*certAuthority, error) {
	crtPEM, err := os.ReadFile(p.path(name + ".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(p.path(name + ".key"))
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
func (p *pki) realNodeCerts(nodes []string) error {
	ca, err := p.loadCA(clusterCA)
	if err != nil {
		return err
	}
	leaves := []leaf{
		// Bound to system:kubelet-api-admin (bootstrap): exec, logs, port-forward.
		{name: apiServerKubeletClient, cn: "kube-apiserver-kubelet-client", client: true},
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

// kubeletConfig is node's KubeletConfiguration. The choices that matter on
// these machines: cgroup v1 with the cgroupfs driver, under a cgroup of its
// own; the serving port on the host's pod-network address only; client
// certificates and webhook authorization, never anonymous; the DNS of pods
// names no outside resolver; eviction thresholds a busy shared disk passes.
func kubeletConfig(p *pki, n *realNode) string {
	return render(kubeletConfigTemplate, kubeletConfigValues{
		Address: host.PodAddress, Port: n.kubeletPort, HealthzPort: n.kubeletHealthPort,
		TLSCertFile: p.path(n.name + "-serving.crt"), TLSPrivateKeyFile: p.path(n.name + "-serving.key"),
		ClientCAFile: p.path(clusterCA + ".crt"), ContainerdSocket: n.containerdSocket(), CgroupRoot: n.cgroup,
		ResolvConf: filepath.Join(n.dir, "resolv.conf"), ClusterDomain: ClusterDomain, ClusterDNS: ClusterDNSAddress,
	})
}

// kubeletConfigValues are what differs between nodes and runs in the
// kubelet's configuration; the rest is fixed in its template.
type kubeletConfigValues struct {
	Address                                      string
	Port, HealthzPort                            int
	TLSCertFile, TLSPrivateKeyFile, ClientCAFile string
	ContainerdSocket, CgroupRoot, ResolvConf     string
	ClusterDomain, ClusterDNS                    string
}

var kubeletConfigTemplate = template.Must(template.New("kubelet-config.yaml").Parse(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {{.Address}}
port: {{.Port}}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {{.HealthzPort}}
tlsCertFile: {{.TLSCertFile}}
tlsPrivateKeyFile: {{.TLSPrivateKeyFile}}
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{.ClientCAFile}}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://{{.ContainerdSocket}}
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupRoot: /{{.CgroupRoot}}
failSwapOn: false
resolvConf: {{.ResolvConf}}
clusterDomain: {{.ClusterDomain}}
clusterDNS:
- {{.ClusterDNS}}
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2%
  imagefs.available: 2%
  nodefs.inodesFree: 2%
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
maxPods: 110
# No iptables chains of the kubelet's own (KUBE-FIREWALL in INPUT/OUTPUT,
# canaries): kube-proxy does not need them here, and kube-proxy --cleanup
# would not remove them.
makeIPTablesUtilChains: false
`))

// render fills a component's configuration template. The templates are fixed
// and their values typed, so a failure is a programming error.
func render(t *template.Template, values any) string {
	var b strings.Builder
	if err := t.Execute(&b, values); err != nil {
		panic(fmt.Sprintf("rendering %s: %v", t.Name(), err))
	}
	return b.String()
}

// kubeletSettings are what a real node's kubelet's command line and
// configuration depend on.
type kubeletSettings struct {
	Binary string
	Node   *realNode
	PKI    *pki
}

func (n *realNode) kubeletKubeconfig() string { return filepath.Join(n.dir, "kubelet.kubeconfig") }

// kubeletSpec is node's kubelet, its configuration (kubeletConfig) and
// the resolv.conf of its pods beside it. It needs its kubeconfig and the
// host prepared (host.PrepareKubelet) first.
func kubeletSpec(s kubeletSettings) processSpec {
	n := s.Node
	cfgPath := filepath.Join(n.dir, "kubelet-config.yaml")
	return processSpec{
		name: n.name + "-kubelet", binary: s.Binary,
		args: []string{
			"--config=" + cfgPath,
			"--kubeconfig=" + n.kubeletKubeconfig(),
			"--root-dir=" + filepath.Join(n.dir, "kubelet"),
			"--hostname-override=" + n.name,
			// The host's pod-network address, which the API server reaches it on
			// (never 127.0.0.1: the kubelet then reports no address at all).
			"--node-ip=" + host.PodAddress,
			"--node-labels=" + SandboxNodeLabel + "=true," + RealNodeLabel + "=true",
			"--v=1",
		},
		files: []file{
			{path: cfgPath, data: kubeletConfig(s.PKI, n)},
			// dnsPolicy Default gets no resolver at all (no outside one may be used);
			// ClusterFirst pods get the cluster DNS (clusterdns.go), which forwards nothing.
			{path: filepath.Join(n.dir, "resolv.conf"), data: "# no resolver: pods of the local control plane have only the cluster DNS\noptions ndots:1\n"},
		},
	}
}
