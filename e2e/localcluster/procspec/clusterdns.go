package procspec

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// Cluster DNS, with real nodes only: CoreDNS v1.15.0 (its kubernetes plugin,
// nothing forwarded: a name outside its zones is REFUSED, so no query
// ever leaves the machine) on the host's pod-network address, port 53. Pods
// use it through the kubelet's clusterDNS; KEDA, a host process, through a
// resolv.conf of its own (kedaResolvConf, keda.go) bind-mounted over
// /etc/resolv.conf in a private mount namespace, so the host's resolver is
// untouched.
const (
	// ClusterDomain is the kubelet's and CoreDNS's cluster domain.
	ClusterDomain = "cluster.local"
	// ClusterDNSAddress is where CoreDNS answers.
	ClusterDNSAddress = host.PodAddress
)

// corefile serves the cluster domain and the reverse zones of the pod and
// Service ranges (198.18.0.0/15) from the API server at kubeconfig, and
// nothing else, on
// bindAddress:53; health and readiness answer on loopback.
func corefile(bindAddress string, healthPort, readyPort int, kubeconfig string) string {
	// The server block holds only these zones, so any other name is REFUSED
	// at once: there is no forward plugin and no root zone to fall into.
	zones := ClusterDomain + ":53 18.198.in-addr.arpa:53 19.198.in-addr.arpa:53"
	return fmt.Sprintf(`%s {
    bind %s
    errors
    health 127.0.0.1:%d
    ready 127.0.0.1:%d
    kubernetes {
        kubeconfig %s localcluster
    }
    cache 5
}
`, zones, bindAddress, healthPort, readyPort, kubeconfig)
}

// ClusterDNSSettings are what CoreDNS's command line and Corefile depend on.
type ClusterDNSSettings struct {
	Binary     string
	Dir        string // its Corefile's
	Kubeconfig string
	HealthPort int
	ReadyPort  int
}

// ClusterDNS is CoreDNS on the cluster DNS address; ready when its
// kubernetes plugin has synced (the ready plugin answers 200).
func ClusterDNS(s ClusterDNSSettings) Spec {
	conf := filepath.Join(s.Dir, "Corefile")
	return Spec{
		Name: "coredns", binary: s.Binary,
		args:  []string{"-conf", conf},
		files: []file{{path: conf, data: corefile(ClusterDNSAddress, s.HealthPort, s.ReadyPort, s.Kubeconfig)}},
		ready: readiness{url: "http://127.0.0.1:" + strconv.Itoa(s.ReadyPort) + "/ready", timeout: 60 * time.Second},
	}
}

// withResolvConf wraps a command so it runs in a private mount namespace
// where resolvConf is bind-mounted over /etc/resolv.conf (util-linux's
// unshare; the namespace, and the mount, end with the process, which keeps
// its pid through the exec).
func withResolvConf(resolvConf, binary string, args []string) (string, []string) {
	script := `mount --bind "$0" /etc/resolv.conf && exec "$@"`
	return "unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, resolvConf, binary}, args...)
}
