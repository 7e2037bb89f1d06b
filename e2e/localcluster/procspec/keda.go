package procspec

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

// KEDASettings are what the command lines of KEDA's operator and metrics
// adapter depend on.
type KEDASettings struct {
	OperatorBinary, AdapterBinary string
	Kubeconfig                    string
	// CertDir holds KEDA's CA and leaf under the names KEDA reads, copied
	// from PKI.
	CertDir string
	PKI     *pki.PKI
	// The operator's metrics, health and gRPC (the adapter's source) ports,
	// the adapter's secure (the APIService's) and metrics ports.
	MetricsPort, HealthPort, GRPCPort     int
	AdapterSecurePort, AdapterMetricsPort int
	// ResolvConf, with real nodes, is where the resolv.conf naming only the
	// cluster DNS is written: KEDA then resolves cluster names (the
	// exporter's Service) as a pod would. Empty: the host's resolver.
	ResolvConf string
}

// kedaEnv is the environment both of KEDA's processes read.
func kedaEnv(kubeconfig string) []string {
	return []string{"KUBECONFIG=" + kubeconfig, "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda", "POD_NAME=keda-operator-local"}
}

// KEDAOperator is KEDA's operator; ready when its /readyz answers. It
// writes KEDA's certificates and, with real nodes, its resolv.conf.
func KEDAOperator(s KEDASettings) Spec {
	g := Spec{
		Name: "keda-operator", binary: s.OperatorBinary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig,
			"--leader-elect=false",
			// Rotation writes a Secret and waits for a kubelet to mount it.
			"--enable-cert-rotation=false",
			"--cert-dir=" + s.CertDir,
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(s.MetricsPort),
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(s.HealthPort),
			"--metrics-service-bind-address=127.0.0.1:" + strconv.Itoa(s.GRPCPort),
		},
		env: kedaEnv(s.Kubeconfig),
		files: []file{
			{path: filepath.Join(s.CertDir, "ca.crt"), from: s.PKI.Path(pki.KEDACA + ".crt"), mode: 0o600},
			{path: filepath.Join(s.CertDir, "tls.crt"), from: s.PKI.Path("keda.crt"), mode: 0o600},
			{path: filepath.Join(s.CertDir, "tls.key"), from: s.PKI.Path("keda.key"), mode: 0o600},
		},
		ready: readiness{url: "http://127.0.0.1:" + strconv.Itoa(s.HealthPort) + "/readyz", timeout: 90 * time.Second},
	}
	if s.ResolvConf != "" {
		g.files = append(g.files, file{path: s.ResolvConf, data: kedaResolvConf()})
	}
	return s.withResolvConf(g)
}

// KEDAAdapter is KEDA's metrics adapter (the external metrics API the
// HPA reads). It exits 0 on start-up errors; it is ready when the aggregator
// calls its APIService Available (plane.kedaAPIServiceAvailable).
func KEDAAdapter(s KEDASettings) Spec {
	return s.withResolvConf(Spec{
		Name: "keda-adapter", binary: s.AdapterBinary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--lister-kubeconfig=" + s.Kubeconfig,
			"--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.AdapterSecurePort),
			"--tls-cert-file=" + filepath.Join(s.CertDir, "tls.crt"), "--tls-private-key-file=" + filepath.Join(s.CertDir, "tls.key"),
			"--cert-dir=" + s.CertDir,
			"--metrics-service-address=127.0.0.1:" + strconv.Itoa(s.GRPCPort),
			"--metrics-service-grpc-authority=keda-operator.keda.svc",
			"--port=" + strconv.Itoa(s.AdapterMetricsPort),
		},
		env: kedaEnv(s.Kubeconfig),
	})
}

// withResolvConf runs g under s.ResolvConf, when set.
func (s KEDASettings) withResolvConf(g Spec) Spec {
	if s.ResolvConf != "" {
		g.binary, g.args = withResolvConf(s.ResolvConf, g.binary, g.args)
	}
	return g
}

// kedaResolvConf is the resolv.conf KEDA's processes see with real nodes:
// only the cluster DNS, with the search path a pod in namespace keda would get.
func kedaResolvConf() string {
	return fmt.Sprintf("nameserver %s\nsearch keda.svc.%s svc.%s %s\noptions ndots:5\n", ClusterDNSAddress, ClusterDomain, ClusterDomain, ClusterDomain)
}
