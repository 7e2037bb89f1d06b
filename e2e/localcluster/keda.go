package localcluster

import (
	"os"
	"path/filepath"
	"strconv"
)

// startKEDA starts KEDA's operator and its metrics adapter (the external
// metrics API the HPA reads).
func (c *Cluster) startKEDA(p *pki, admin string) error {
	certDir, err := c.kedaCertDir(p)
	if err != nil {
		return err
	}
	// With real nodes KEDA resolves cluster names (the exporter's Service) as a pod
	// would: through the cluster DNS only.
	startKEDAProcess := func(name, binary string, args []string, env ...string) error {
		if c.realNodes > 0 {
			resolv, err := c.kedaResolvConf()
			if err != nil {
				return err
			}
			binary, args = withResolvConf(resolv, binary, args)
		}
		_, err := c.procs.Start(name, binary, args, env...)
		return err
	}
	kedaEnv := []string{"KUBECONFIG=" + admin, "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda", "POD_NAME=keda-operator-local"}
	if err := startKEDAProcess("keda-operator", c.Binaries.Path("keda-operator"), []string{
		"--kubeconfig=" + admin,
		"--leader-elect=false",
		// Rotation writes a Secret and waits for a kubelet to mount it.
		"--enable-cert-rotation=false",
		"--cert-dir=" + certDir,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.kedaMetrics),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.kedaHealth),
		"--metrics-service-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.kedaGRPC),
	}, kedaEnv...); err != nil {
		return err
	}
	return startKEDAProcess("keda-adapter", c.Binaries.Path("keda-adapter"), []string{
		"--kubeconfig=" + admin, "--lister-kubeconfig=" + admin,
		"--authentication-kubeconfig=" + admin, "--authorization-kubeconfig=" + admin,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.adapterSecure),
		"--tls-cert-file=" + filepath.Join(certDir, "tls.crt"), "--tls-private-key-file=" + filepath.Join(certDir, "tls.key"),
		"--cert-dir=" + certDir,
		"--metrics-service-address=127.0.0.1:" + strconv.Itoa(c.ports.kedaGRPC),
		"--metrics-service-grpc-authority=keda-operator.keda.svc",
		"--port=" + strconv.Itoa(c.ports.adapterMetrics),
	}, kedaEnv...)
}

// kedaCertDir lays out KEDA's CA and leaf under the names KEDA reads.
func (c *Cluster) kedaCertDir(p *pki) (string, error) {
	dir := filepath.Join(c.StateDir, "keda-certs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for src, dst := range map[string]string{kedaCA + ".crt": "ca.crt", "keda.crt": "tls.crt", "keda.key": "tls.key"} {
		b, err := os.ReadFile(p.path(src))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}
