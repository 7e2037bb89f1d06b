package procspec

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// fileData is the contents g writes at path, failing the test when g writes
// no such file.
func fileData(t *testing.T, g Spec, path string) string {
	t.Helper()
	for _, f := range g.files {
		if f.path == path {
			return f.data
		}
	}
	t.Fatalf("%s writes no %s (its files: %v)", g.Name, path, g.files)
	return ""
}

// testKubernetesSettings are settings as Start makes them, with made-up ports.
func testKubernetesSettings() KubernetesSettings {
	p := pki.New("/state/pki")
	etcd := EtcdSettings{Binary: "/tools/etcd", DataDir: "/state/etcd", ClientPort: 2379, PeerPort: 2380}
	return KubernetesSettings{
		Etcd:              etcd,
		APIServer:         APIServerSettings{Binary: "/tools/kube-apiserver", EtcdURL: etcd.ClientURL(), Address: "127.0.0.1", Port: 6443, PKI: p},
		ControllerManager: ControllerManagerSettings{Binary: "/tools/kcm", Kubeconfig: "/state/controller-manager.kubeconfig", Port: 10257, PKI: p, HPASyncPeriod: 15 * time.Second},
		Scheduler:         SchedulerSettings{Binary: "/tools/sched", Kubeconfig: "/state/scheduler.kubeconfig", Port: 10259},
	}
}

// Kubernetes' own processes in the order Start relies on: etcd first (the
// API server's store), then the API server, ready by its /readyz as an
// admin, before the controllers that talk to it; the API server is given
// etcd's client URL.
func TestKubernetesSpecsStartInTheOrderTheyNeedEachOther(t *testing.T) {
	specs := Kubernetes(testKubernetesSettings())
	var names []string
	for _, g := range specs {
		names = append(names, g.Name)
	}
	if want := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}; !slices.Equal(names, want) {
		t.Fatalf("start order %v, want %v", names, want)
	}
	etcd, api := flagMap(t, specs[0].args), flagMap(t, specs[1].args)
	if api["--etcd-servers"] != etcd["--advertise-client-urls"] {
		t.Errorf("the API server reads etcd at %s; etcd serves %s", api["--etcd-servers"], etcd["--advertise-client-urls"])
	}
	if specs[0].ready.url != etcd["--advertise-client-urls"]+"/health" {
		t.Errorf("etcd is ready by %q, want its /health", specs[0].ready.url)
	}
	if r := specs[1].ready; r.url != "https://127.0.0.1:6443/readyz" || r.clientUser != "admin" {
		t.Errorf("the API server is ready by %q as %q, want /readyz as admin", r.url, r.clientUser)
	}
}

// etcd is a throw-away store: no fsync, its data under the state directory.
func TestEtcdSpecIsAThrowAwayStore(t *testing.T) {
	etcd := flagMap(t, Etcd(testKubernetesSettings().Etcd).args)
	if etcd["--unsafe-no-fsync"] != "true" {
		t.Errorf("--unsafe-no-fsync=%q: fsync costs seconds a throw-away store does not need", etcd["--unsafe-no-fsync"])
	}
	if etcd["--data-dir"] != "/state/etcd" {
		t.Errorf("--data-dir=%q, want under the state directory", etcd["--data-dir"])
	}
}

// The controller-manager runs the HPA at the asked sync period, with the
// controllers the product and Pulumi's await logic read.
func TestControllerManagerSpecRunsTheHPAAtTheSyncPeriod(t *testing.T) {
	s := testKubernetesSettings().ControllerManager
	g := ControllerManager(s)
	if !slices.Contains(g.args, "--horizontal-pod-autoscaler-sync-period=15s") {
		t.Errorf("args %v: no --horizontal-pod-autoscaler-sync-period=15s", g.args)
	}
	kcm := flagMap(t, g.args)
	controllers := strings.Split(kcm["--controllers"], ",")
	for _, c := range []string{"horizontal-pod-autoscaler-controller", "endpoints-controller", "garbage-collector-controller", "serviceaccount-token-controller"} {
		if !slices.Contains(controllers, c) {
			t.Errorf("--controllers lacks %s: %v", c, controllers)
		}
	}
	if kcm["--kubeconfig"] != s.Kubeconfig || kcm["--service-account-private-key-file"] != "/state/pki/"+pki.SAKeyFile {
		t.Errorf("kubeconfig %q, SA key %q: want the settings'", kcm["--kubeconfig"], kcm["--service-account-private-key-file"])
	}
}

// KEDA's two processes: the environment they read, the adapter reading the
// operator's gRPC address, the certificates copied from the PKI, and with a
// resolv.conf both run under it (the operator writing it).
func TestKEDASpecsShareTheirEnvCertsAndResolver(t *testing.T) {
	s := KEDASettings{OperatorBinary: "/tools/keda-operator", AdapterBinary: "/tools/keda-adapter", Kubeconfig: "/state/kubeconfig",
		CertDir: "/state/keda-certs", PKI: pki.New("/state/pki"), MetricsPort: 1, HealthPort: 2, GRPCPort: 3, AdapterSecurePort: 4, AdapterMetricsPort: 5}
	op, ad := KEDAOperator(s), KEDAAdapter(s)
	if op.Name != "keda-operator" || ad.Name != "keda-adapter" || op.binary != s.OperatorBinary || ad.binary != s.AdapterBinary {
		t.Errorf("processes %s (%s), %s (%s)", op.Name, op.binary, ad.Name, ad.binary)
	}
	for _, g := range []Spec{op, ad} {
		for _, e := range []string{"KUBECONFIG=/state/kubeconfig", "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda"} {
			if !slices.Contains(g.env, e) {
				t.Errorf("%s's env %v lacks %s", g.Name, g.env, e)
			}
		}
	}
	if a, o := flagMap(t, ad.args)["--metrics-service-address"], flagMap(t, op.args)["--metrics-service-bind-address"]; a != o || a != "127.0.0.1:3" {
		t.Errorf("the adapter reads %q, the operator serves %q", a, o)
	}
	if op.ready.url != "http://127.0.0.1:2/readyz" {
		t.Errorf("the operator is ready by %q", op.ready.url)
	}
	copied := map[string]string{}
	for _, f := range op.files {
		copied[f.path] = f.from
	}
	if copied["/state/keda-certs/tls.key"] != "/state/pki/keda.key" || copied["/state/keda-certs/ca.crt"] != "/state/pki/"+pki.KEDACA+".crt" {
		t.Errorf("the operator's files %v: want KEDA's CA and leaf from the PKI", copied)
	}

	s.ResolvConf = "/state/coredns/keda-resolv.conf"
	op, ad = KEDAOperator(s), KEDAAdapter(s)
	for _, g := range []Spec{op, ad} {
		if g.binary != "unshare" || !slices.Contains(g.args, s.ResolvConf) {
			t.Errorf("%s with a resolv.conf: %s %v, want it under unshare with %s", g.Name, g.binary, g.args, s.ResolvConf)
		}
	}
	if conf := fileData(t, op, s.ResolvConf); !strings.HasPrefix(conf, "nameserver "+ClusterDNSAddress+"\n") {
		t.Errorf("KEDA's resolv.conf:\n%s\nwant only the cluster DNS", conf)
	}
}

// agent-sandbox's controller: its kubeconfig by flag and environment, no
// webhook, ready by /readyz on its health port.
func TestAgentSandboxSpec(t *testing.T) {
	g := AgentSandbox(AgentSandboxSettings{Binary: "/tools/asc", Kubeconfig: "/state/kubeconfig", MetricsPort: 1, HealthPort: 2})
	f := flagMap(t, g.args)
	if g.Name != "agent-sandbox-controller" || f["--enable-webhook"] != "false" || f["--extensions"] != "true" || !slices.Contains(g.env, "KUBECONFIG=/state/kubeconfig") {
		t.Errorf("%s: args %v env %v", g.Name, g.args, g.env)
	}
	if g.ready.url != "http://127.0.0.1:2/readyz" {
		t.Errorf("ready by %q", g.ready.url)
	}
}

// KWOK reads the stages file it is given and manages only the annotated nodes.
func TestKWOKSpec(t *testing.T) {
	f := flagMap(t, KWOK(KWOKSettings{Binary: "/tools/kwok", Kubeconfig: "/state/kubeconfig", Port: 7, StagesFile: "/state/kwok-stages.yaml"}).args)
	if f["--config"] != "/state/kwok-stages.yaml" || f["--manage-all-nodes"] != "false" || f["--cidr"] != host.KWOKPodCIDR {
		t.Errorf("kwok flags %v", f)
	}
}

// CoreDNS runs the Corefile it writes and is ready by its ready plugin.
func TestClusterDNSSpecRunsTheCorefileItWrites(t *testing.T) {
	g := ClusterDNS(ClusterDNSSettings{Binary: "/tools/coredns", Dir: "/state/coredns", Kubeconfig: "/state/kubeconfig", HealthPort: 8, ReadyPort: 9})
	if !slices.Equal(g.args, []string{"-conf", "/state/coredns/Corefile"}) {
		t.Errorf("args %v", g.args)
	}
	if conf := fileData(t, g, "/state/coredns/Corefile"); !strings.Contains(conf, "ready 127.0.0.1:9") || !strings.Contains(conf, "kubeconfig /state/kubeconfig") {
		t.Errorf("Corefile:\n%s", conf)
	}
	if g.ready.url != "http://127.0.0.1:9/ready" {
		t.Errorf("ready by %q", g.ready.url)
	}
}

// A real node's kubelet reads the configuration it writes, its own
// kubeconfig, and is named after its node (the fault tests kill it by that name).
func TestKubeletSpecReadsItsNodesFiles(t *testing.T) {
	n := &RealNode{Name: "realnode-0", Dir: "/state/realnode-0", Cgroup: "localcluster-realnode-0", KubeletPort: 1, KubeletHealthPort: 2}
	g := Kubelet(KubeletSettings{Binary: "/tools/kubelet", Node: n, PKI: pki.New("/state/pki")})
	f := flagMap(t, g.args)
	if g.Name != "realnode-0-kubelet" || f["--config"] != "/state/realnode-0/kubelet-config.yaml" || f["--kubeconfig"] != "/state/realnode-0/kubelet.kubeconfig" {
		t.Errorf("%s: %v", g.Name, f)
	}
	if cfg := fileData(t, g, f["--config"]); !strings.Contains(cfg, "resolvConf: /state/realnode-0/resolv.conf") {
		t.Errorf("kubelet config names another resolv.conf:\n%s", cfg)
	}
	fileData(t, g, "/state/realnode-0/resolv.conf")
}

// start writes a process's files before it runs, records it, and Kill and
// Restart by its name run it again with its own command.
func TestProcessSpecStartWritesItsFilesAndRestartsByName(t *testing.T) {
	dir := t.TempDir()
	procs := process.NewSet(dir, false)
	t.Cleanup(func() { procs.Stop(time.Second) })
	conf := filepath.Join(dir, "conf", "sleeper.conf")
	g := Spec{Name: "sleeper", binary: "/bin/sh", args: []string{"-c", `test "$(cat "$0")" = on && exec sleep 60`, conf},
		files: []file{{path: conf, data: "on"}}}
	proc, err := g.Start(procs)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if !proc.Running() {
		t.Fatalf("it did not find its file: %v", proc.ExitedError())
	}
	if err := procs.Kill("sleeper"); err != nil {
		t.Fatal(err)
	}
	if err := procs.Restart("sleeper"); err != nil {
		t.Fatal(err)
	}
	if p := procs.Get("sleeper"); p == proc || !p.Running() || !slices.Equal(p.Args, g.args) {
		t.Errorf("restarted: %+v", p)
	}
}

// The scheduler authenticates and is authorized with its own kubeconfig and
// runs alone (no leader election).
func TestSchedulerSpec(t *testing.T) {
	s := testKubernetesSettings().Scheduler
	f := flagMap(t, Scheduler(s).args)
	for _, flag := range []string{"--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"} {
		if f[flag] != s.Kubeconfig {
			t.Errorf("%s=%q, want %s", flag, f[flag], s.Kubeconfig)
		}
	}
	if f["--leader-elect"] != "false" || f["--secure-port"] != "10259" {
		t.Errorf("scheduler flags %v", f)
	}
	if f["--v"] != "1" {
		t.Errorf("--v=%q by default, want 1", f["--v"])
	}
	s.LogLevel = 5
	if f := flagMap(t, Scheduler(s).args); f["--v"] != "5" {
		t.Errorf("--v=%q with LogLevel 5, want 5 (each attempt and queue move logged)", f["--v"])
	}
}

// A spec built before its tool (an empty path: a real node's tools are built
// when the node is prepared) is refused by name, not exec'd as no command.
func TestSpecWithoutItsBinaryIsRefusedByName(t *testing.T) {
	procs := process.NewSet(t.TempDir(), false)
	_, err := ClusterDNS(ClusterDNSSettings{Dir: t.TempDir()}).Start(procs)
	if err == nil || !strings.Contains(err.Error(), "coredns: no binary") {
		t.Fatalf("a CoreDNS spec with no binary started or failed otherwise: %v", err)
	}
}
