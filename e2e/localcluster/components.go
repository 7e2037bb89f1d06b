package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func (c *Cluster) startAPIServer(ctx context.Context, p *pki) error {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(c.ports.etcdPeer)
	etcd, err := c.startProcess("etcd", c.Binaries.Path("etcd"), []string{
		"--name=local", "--data-dir=" + filepath.Join(c.StateDir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=local=" + peerURL,
		// A throw-away store: durability buys nothing here and fsync costs seconds.
		"--unsafe-no-fsync=true", "--log-level=warn",
	})
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, etcd, etcdURL+"/health", nil, 60*time.Second); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	api, err := c.startProcess("kube-apiserver", c.Binaries.Path("kube-apiserver"), []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.ports.apiserver),
		"--tls-cert-file=" + p.path(apiServerCert+".crt"), "--tls-private-key-file=" + p.path(apiServerCert+".key"),
		"--client-ca-file=" + p.path(clusterCA+".crt"),
		"--authorization-mode=RBAC",
		// The default admission chain (NamespaceLifecycle, ServiceAccount,
		// RuntimeClass, PodSecurity, ...) stays on; nothing is disabled.
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.path(saPubFile),
		"--service-account-signing-key-file=" + p.path(saKeyFile),
		"--service-cluster-ip-range=10.96.0.0/16",
		// Aggregation: the front proxy's own CA and client cert, or aggregated
		// calls (KEDA's external metrics) arrive anonymous.
		"--requestheader-client-ca-file=" + p.path(frontProxyCA+".crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.path("front-proxy-client.key"),
		// The endpoint resolver rejects ExternalName services, which is how the
		// APIService reaches the adapter on loopback.
		"--enable-aggregator-routing=false",
		// No kubelet and no kube-proxy: nothing would use the endpoints of the
		// kubernetes Service, and a loopback advertise address is rejected there.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true", "--profiling=false",
		"--v=1",
	})
	if err != nil {
		return err
	}
	for _, k := range []struct{ file, user string }{{"kubeconfig", "admin"}, {"controller-manager.kubeconfig", "controller-manager"}, {"scheduler.kubeconfig", "scheduler"}} {
		if err := c.writeKubeconfig(p, filepath.Join(c.StateDir, k.file), k.user); err != nil {
			return err
		}
	}
	c.Kubeconfig = filepath.Join(c.StateDir, "kubeconfig")
	tlsCfg, err := clientTLS(p, "admin")
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, api, c.APIServerURL+"/readyz", tlsCfg, 120*time.Second); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	return c.connect()
}

func (c *Cluster) startControllers(ctx context.Context, p *pki) error {
	kcm := filepath.Join(c.StateDir, "controller-manager.kubeconfig")
	if _, err := c.startProcess("kube-controller-manager", c.Binaries.Path("kube-controller-manager"), []string{
		"--kubeconfig=" + kcm, "--authentication-kubeconfig=" + kcm, "--authorization-kubeconfig=" + kcm,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.controllerManager),
		"--leader-elect=false",
		"--service-account-private-key-file=" + p.path(saKeyFile),
		"--root-ca-file=" + p.path(clusterCA+".crt"),
		// Each controller acts as its own ServiceAccount with its built-in role
		// (system:controller:*), as on a real cluster.
		"--use-service-account-credentials=true",
		// What the product and Pulumi's await logic rely on: endpoints for
		// Services (Pulumi waits for them), the HPA, garbage collection, ...
		"--controllers=horizontal-pod-autoscaler-controller,garbage-collector-controller,namespace-controller," +
			"serviceaccount-controller,serviceaccount-token-controller,deployment-controller,replicaset-controller," +
			"job-controller,pod-garbage-collector-controller,node-lifecycle-controller," +
			"root-ca-certificate-publisher-controller,endpoints-controller,endpointslice-controller,disruption-controller",
		"--horizontal-pod-autoscaler-sync-period=" + c.HPASyncPeriod.String(),
		"--v=1",
	}); err != nil {
		return err
	}
	sch := filepath.Join(c.StateDir, "scheduler.kubeconfig")
	_, err := c.startProcess("kube-scheduler", c.Binaries.Path("kube-scheduler"), []string{
		"--kubeconfig=" + sch, "--authentication-kubeconfig=" + sch, "--authorization-kubeconfig=" + sch,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.scheduler),
		"--leader-elect=false", "--v=1",
	})
	return err
}

func (c *Cluster) startAddons(ctx context.Context, p *pki) error {
	admin := c.Kubeconfig
	stages, err := c.kwokStagesFile()
	if err != nil {
		return err
	}
	if _, err := c.startProcess("kwok", c.Binaries.Path("kwok"), []string{
		"--kubeconfig=" + admin,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		// Without leases the node lifecycle controller marks nodes NotReady after ~50s.
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
		"--node-ip=127.0.0.1",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports.kwok),
		"--config=" + stages,
	}); err != nil {
		return err
	}
	if c.without["agent-sandbox-controller"] {
		c.say("not starting agent-sandbox-controller (Options.Without)")
	} else if _, err := c.startProcess("agent-sandbox-controller", c.Binaries.Path("agent-sandbox-controller"), []string{
		"--kubeconfig=" + admin,
		"--extensions=true",
		// No webhook server locally; the CRDs were applied with conversion None.
		"--enable-webhook=false",
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.sandboxMetrics),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.sandboxHealth),
	}, "KUBECONFIG="+admin); err != nil {
		return err
	}
	if c.without["keda"] {
		c.say("not starting KEDA (Options.Without)")
		return nil
	}
	certDir, err := c.kedaCertDir(p)
	if err != nil {
		return err
	}
	kedaEnv := []string{"KUBECONFIG=" + admin, "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda", "POD_NAME=keda-operator-local"}
	if _, err := c.startProcess("keda-operator", c.Binaries.Path("keda-operator"), []string{
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
	_, err = c.startProcess("keda-adapter", c.Binaries.Path("keda-adapter"), []string{
		"--kubeconfig=" + admin, "--lister-kubeconfig=" + admin,
		"--authentication-kubeconfig=" + admin, "--authorization-kubeconfig=" + admin,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.adapterSecure),
		"--tls-cert-file=" + filepath.Join(certDir, "tls.crt"), "--tls-private-key-file=" + filepath.Join(certDir, "tls.key"),
		"--cert-dir=" + certDir,
		"--metrics-service-address=127.0.0.1:" + strconv.Itoa(c.ports.kedaGRPC),
		"--metrics-service-grpc-authority=keda-operator.keda.svc",
		"--port=" + strconv.Itoa(c.ports.adapterMetrics),
	}, kedaEnv...)
	return err
}

// kwokStagesFile is the default stages file, or the one Options.KwokStages
// made of it (written into the state directory).
func (c *Cluster) kwokStagesFile() (string, error) {
	defaults := filepath.Join(c.Binaries.DataDir("kwok"), "kwok-stages.yaml")
	if c.kwokStages == nil {
		return defaults, nil
	}
	b, err := os.ReadFile(defaults)
	if err != nil {
		return "", err
	}
	edited, err := c.kwokStages(b)
	if err != nil {
		return "", fmt.Errorf("Options.KwokStages: %w", err)
	}
	path := filepath.Join(c.StateDir, "kwok-stages.yaml")
	return path, os.WriteFile(path, edited, 0o644)
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

// writeKubeconfig writes a self-contained kubeconfig (certificates embedded),
// so it can be handed to Pulumi as contents as well as a path.
func (c *Cluster) writeKubeconfig(p *pki, path, user string) error {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(p.path(name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read(clusterCA + ".crt")
	if err != nil {
		return err
	}
	crt, err := read(user + ".crt")
	if err != nil {
		return err
	}
	key, err := read(user + ".key")
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: localcluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: localcluster
  context:
    cluster: localcluster
    user: %s
current-context: localcluster
`, c.APIServerURL, ca, user, crt, key, user)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

func clientTLS(p *pki, user string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(p.path(user+".crt"), p.path(user+".key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(p.path(clusterCA + ".crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// waitHTTP polls url until it answers 200, failing early if proc exits.
func waitHTTP(ctx context.Context, proc *process, url string, tlsCfg *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if proc != nil && proc.exited() {
			return fmt.Errorf("%s exited while waiting for %s (see its log)", proc.name, url)
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %s", url, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
