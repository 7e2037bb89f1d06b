package procspec

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/template"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

// kubeletConfig is node's KubeletConfiguration. The choices that matter on
// these machines: cgroup v1 with the cgroupfs driver, under a cgroup of its
// own; the serving port on the host's pod-network address only; client
// certificates and webhook authorization, never anonymous; the DNS of pods
// names no outside resolver; eviction thresholds a busy shared disk passes.
func kubeletConfig(p *pki.PKI, n *RealNode) string {
	return render(kubeletConfigTemplate, kubeletConfigValues{
		Address: host.PodAddress, Port: n.KubeletPort, HealthzPort: n.KubeletHealthPort,
		TLSCertFile: p.Path(n.Name + "-serving.crt"), TLSPrivateKeyFile: p.Path(n.Name + "-serving.key"),
		ClientCAFile: p.Path(pki.ClusterCA + ".crt"), ContainerdSocket: n.ContainerdSocket(), CgroupRoot: n.Cgroup,
		ResolvConf: filepath.Join(n.Dir, "resolv.conf"), ClusterDomain: ClusterDomain, ClusterDNS: ClusterDNSAddress,
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

// KubeletSettings are what a real node's kubelet's command line and
// configuration depend on.
type KubeletSettings struct {
	Binary string
	Node   *RealNode
	PKI    *pki.PKI
}

// KubeletKubeconfig is where the node's kubelet reads its kubeconfig.
func (n *RealNode) KubeletKubeconfig() string { return filepath.Join(n.Dir, "kubelet.kubeconfig") }

// Kubelet is node's kubelet, its configuration (kubeletConfig) and
// the resolv.conf of its pods beside it. It needs its kubeconfig and the
// host prepared (host.PrepareKubelet) first.
func Kubelet(s KubeletSettings) Spec {
	n := s.Node
	cfgPath := filepath.Join(n.Dir, "kubelet-config.yaml")
	return Spec{
		Name: n.Name + "-kubelet", binary: s.Binary,
		args: []string{
			"--config=" + cfgPath,
			"--kubeconfig=" + n.KubeletKubeconfig(),
			"--root-dir=" + filepath.Join(n.Dir, "kubelet"),
			"--hostname-override=" + n.Name,
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
			{path: filepath.Join(n.Dir, "resolv.conf"), data: "# no resolver: pods of the local control plane have only the cluster DNS\noptions ndots:1\n"},
		},
	}
}

// RealNodeLabel marks real nodes (value "true").
const RealNodeLabel = "node.warm-pool-autoscaling-keda.local/real"

// SandboxNodeLabel marks the simulated nodes the runtime class schedules to.
const SandboxNodeLabel = "warm-pool-autoscaling-keda.local/sandbox-capable"
