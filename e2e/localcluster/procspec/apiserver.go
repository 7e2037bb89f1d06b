package procspec

import (
	"strconv"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

// APIServerSettings is everything the API server's flags depend on.
type APIServerSettings struct {
	Binary  string
	EtcdURL string
	// Address it listens on and advertises: loopback, or with real nodes the
	// host's pod-network address (pods reach it as the kubernetes Service).
	Address string
	Port    int
	PKI     *pki.PKI
	// WithKubelets: real nodes run kubelets it must reach (exec, logs) and a
	// kube-proxy that needs the kubernetes Service's endpoints.
	WithKubelets bool
}

// APIServer is kube-apiserver; ready when /readyz answers an admin.
func APIServer(s APIServerSettings) Spec {
	return Spec{
		Name: "kube-apiserver", binary: s.Binary, args: apiServerFlags(s),
		ready: readiness{url: s.url() + "/readyz", clientUser: "admin", timeout: 120 * time.Second},
	}
}

// url is where clients reach the API server.
func (s APIServerSettings) url() string { return "https://" + s.Address + ":" + strconv.Itoa(s.Port) }

// apiServerFlags is the API server's command line: every flag, with or
// without kubelets, is here.
func apiServerFlags(s APIServerSettings) []string {
	p := s.PKI
	flags := []string{
		"--etcd-servers=" + s.EtcdURL,
		"--bind-address=" + s.Address, "--advertise-address=" + s.Address,
		"--secure-port=" + strconv.Itoa(s.Port),
		"--tls-cert-file=" + p.Path(pki.APIServerCert+".crt"), "--tls-private-key-file=" + p.Path(pki.APIServerCert+".key"),
		"--client-ca-file=" + p.Path(pki.ClusterCA+".crt"),
		// Node: each kubelet may touch only its own node and its pods' objects.
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		// The default admission chain (NamespaceLifecycle, ServiceAccount,
		// RuntimeClass, PodSecurity, ...) stays on; nothing is disabled.
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.Path(pki.SAPubFile),
		"--service-account-signing-key-file=" + p.Path(pki.SAKeyFile),
		"--service-cluster-ip-range=" + host.ServiceCIDR,
		// Aggregation: the front proxy's own CA and client cert, or aggregated
		// calls (KEDA's external metrics) arrive anonymous.
		"--requestheader-client-ca-file=" + p.Path(pki.FrontProxyCA+".crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.Path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.Path("front-proxy-client.key"),
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
		"--kubelet-client-certificate="+p.Path(pki.APIServerKubeletClient+".crt"),
		"--kubelet-client-key="+p.Path(pki.APIServerKubeletClient+".key"),
		"--kubelet-certificate-authority="+p.Path(pki.ClusterCA+".crt"),
		"--kubelet-preferred-address-types=InternalIP",
	)
}
