package procspec

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

// The kubelet's and kube-proxy's configuration files, read back as YAML: every
// value filled, the serving and health ports where they must be, and nothing
// that changes the machine beyond the node (no iptables chains of the
// kubelet's own, no route_localnet, the conntrack sysctls left alone).
func TestNodeComponentConfigsKeepToTheNode(t *testing.T) {
	n := &RealNode{Name: "realnode-0", Dir: "/state/realnode-0", Cgroup: "localcluster-realnode-0", KubeletPort: 30003, KubeletHealthPort: 30004}
	kubelet := fileData(t, Kubelet(KubeletSettings{Binary: "/tools/kubelet", Node: n, PKI: pki.New("/state/pki")}), "/state/realnode-0/kubelet-config.yaml")
	proxy := fileData(t, KubeProxy(KubeProxySettings{Binary: "/tools/kube-proxy", Dir: "/state/kube-proxy", NodeName: n.Name, HealthPort: 30001, MetricsPort: 30002}),
		"/state/kube-proxy/config.yaml")
	for name, doc := range map[string]string{"kubelet": kubelet, "kube-proxy": proxy} {
		if strings.Contains(doc, "<no value>") {
			t.Errorf("%s config has an unfilled value:\n%s", name, doc)
		}
	}
	get := func(doc string, path ...string) string {
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return "<missing>"
			}
			v = m[p]
		}
		return fmt.Sprint(v)
	}
	want := []struct {
		doc, want string
		path      []string
	}{
		{kubelet, host.PodAddress, []string{"address"}},
		{kubelet, "30003", []string{"port"}},
		{kubelet, "0", []string{"readOnlyPort"}},
		{kubelet, "127.0.0.1", []string{"healthzBindAddress"}},
		{kubelet, "30004", []string{"healthzPort"}},
		{kubelet, "false", []string{"authentication", "anonymous", "enabled"}},
		{kubelet, "Webhook", []string{"authorization", "mode"}},
		{kubelet, "unix:///state/realnode-0/containerd.sock", []string{"containerRuntimeEndpoint"}},
		{kubelet, "/localcluster-realnode-0", []string{"cgroupRoot"}},
		{kubelet, "false", []string{"makeIPTablesUtilChains"}},
		{kubelet, "[" + ClusterDNSAddress + "]", []string{"clusterDNS"}},
		{proxy, "[" + host.PodAddress + "/32]", []string{"nodePortAddresses"}},
		{proxy, "127.0.0.1:30001", []string{"healthzBindAddress"}},
		{proxy, "127.0.0.1:30002", []string{"metricsBindAddress"}},
		{proxy, "false", []string{"iptables", "localhostNodePorts"}},
		{proxy, "0", []string{"conntrack", "maxPerCore"}},
		{proxy, "0", []string{"conntrack", "min"}},
	}
	for _, w := range want {
		if got := get(w.doc, w.path...); got != w.want {
			t.Errorf("%s = %s, want %s", strings.Join(w.path, "."), got, w.want)
		}
	}
}
