package procspec

import (
	"path/filepath"
	"text/template"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// KubeProxySettings are what kube-proxy's command line and configuration
// depend on.
type KubeProxySettings struct {
	Binary      string
	Dir         string // its configuration's and kubeconfig's
	NodeName    string
	HealthPort  int
	MetricsPort int
}

// Kubeconfig is where kube-proxy reads its kubeconfig.
func (s KubeProxySettings) Kubeconfig() string { return filepath.Join(s.Dir, "kubeconfig") }

// KubeProxy is the one kube-proxy (iptables mode) of the machine:
// every real node shares the host's network namespace, so one set of rules
// serves them all. It needs its kubeconfig and its rules recorded in the
// ledger (host.RecordKubeProxy) first.
func KubeProxy(s KubeProxySettings) Spec {
	cfgPath := filepath.Join(s.Dir, "config.yaml")
	return Spec{
		Name: "kube-proxy", binary: s.Binary,
		args:  []string{"--config=" + cfgPath, "--v=1"},
		files: []file{{path: cfgPath, data: kubeProxyConfig(s)}},
	}
}

// kubeProxyConfig is kube-proxy's configuration: iptables mode, NodePorts and
// health only where the node is, nothing machine-wide changed.
func kubeProxyConfig(s KubeProxySettings) string {
	return render(kubeProxyConfigTemplate, kubeProxyConfigValues{
		Kubeconfig: s.Kubeconfig(), NodeName: s.NodeName, ClusterCIDR: host.ClusterCIDR, NodePortAddress: host.PodAddress,
		HealthzPort: s.HealthPort, MetricsPort: s.MetricsPort,
	})
}

// kubeProxyConfigValues are what differs between runs in kube-proxy's
// configuration; the rest is fixed in its template.
type kubeProxyConfigValues struct {
	Kubeconfig, NodeName, ClusterCIDR, NodePortAddress string
	HealthzPort, MetricsPort                           int
}

var kubeProxyConfigTemplate = template.Must(template.New("kube-proxy config.yaml").Parse(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {{.Kubeconfig}}
mode: iptables
hostnameOverride: {{.NodeName}}
clusterCIDR: {{.ClusterCIDR}}
# NodePorts only on the host's pod-network address, never the machine's interface.
nodePortAddresses: ["{{.NodePortAddress}}/32"]
healthzBindAddress: 127.0.0.1:{{.HealthzPort}}
metricsBindAddress: 127.0.0.1:{{.MetricsPort}}
iptables:
  # true would set route_localnet machine-wide.
  localhostNodePorts: false
# Zeros leave the machine's conntrack sysctls as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`))
