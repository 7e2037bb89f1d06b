package procspec

import (
	"strings"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

func flagMap(t *testing.T, flags []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(name, "--") {
			t.Errorf("%q is not --name=value", f)
		}
		if _, dup := m[name]; dup {
			t.Errorf("%s given twice", name)
		}
		m[name] = value
	}
	return m
}

// The API server's command line with simulated nodes and with real ones: the differences are
// the address, the kubelet client and the endpoint reconciler, and nothing else.
func TestAPIServerFlagsWithAndWithoutKubelets(t *testing.T) {
	p := pki.New("/state/pki")
	kwok := flagMap(t, apiServerFlags(APIServerSettings{EtcdURL: "http://127.0.0.1:2", Address: "127.0.0.1", Port: 3, PKI: p}))
	real := flagMap(t, apiServerFlags(APIServerSettings{EtcdURL: "http://127.0.0.1:2", Address: host.PodAddress, Port: 3, PKI: p, WithKubelets: true}))

	for name, m := range map[string]map[string]string{"simulated nodes": kwok, "real nodes": real} {
		for flag, want := range map[string]string{
			"--etcd-servers":       "http://127.0.0.1:2",
			"--secure-port":        "3",
			"--authorization-mode": "Node,RBAC",
			"--client-ca-file":     "/state/pki/" + pki.ClusterCA + ".crt",
		} {
			if m[flag] != want {
				t.Errorf("%s: %s=%q, want %q", name, flag, m[flag], want)
			}
		}
		for flag, v := range m {
			if strings.HasSuffix(flag, "-file") && !strings.HasPrefix(v, "/state/pki/") {
				t.Errorf("%s: %s=%s is not under the control plane's PKI directory", name, flag, v)
			}
		}
	}
	if kwok["--bind-address"] != "127.0.0.1" || kwok["--advertise-address"] != "127.0.0.1" {
		t.Errorf("simulated nodes: listens on %s, advertises %s; want loopback", kwok["--bind-address"], kwok["--advertise-address"])
	}
	if kwok["--endpoint-reconciler-type"] != "none" {
		t.Errorf("simulated nodes: a loopback advertise address needs --endpoint-reconciler-type=none")
	}
	if real["--bind-address"] != host.PodAddress || real["--advertise-address"] != host.PodAddress {
		t.Errorf("real nodes: listens on %s, advertises %s; want the pods' gateway %s", real["--bind-address"], real["--advertise-address"], host.PodAddress)
	}
	if _, ok := real["--endpoint-reconciler-type"]; ok {
		t.Errorf("real nodes: kube-proxy needs the kubernetes Service's endpoints; the reconciler must run")
	}
	for _, flag := range []string{"--kubelet-client-certificate", "--kubelet-client-key", "--kubelet-certificate-authority"} {
		if real[flag] == "" {
			t.Errorf("real nodes: %s missing: exec and logs would fail", flag)
		}
		if _, ok := kwok[flag]; ok {
			t.Errorf("simulated nodes: %s set with no kubelet to reach", flag)
		}
	}
	if len(real) != len(kwok)+3 {
		t.Errorf("real nodes have %d flags, simulated %d: want exactly the four kubelet flags instead of the endpoint reconciler", len(real), len(kwok))
	}
}
