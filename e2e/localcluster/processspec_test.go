package localcluster

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// fileData is the contents g writes at path, failing the test when g writes
// no such file.
func fileData(t *testing.T, g processSpec, path string) string {
	t.Helper()
	for _, f := range g.files {
		if f.path == path {
			return f.data
		}
	}
	t.Fatalf("%s writes no %s (its files: %v)", g.name, path, g.files)
	return ""
}

// testKubernetesSettings are settings as Start makes them, with made-up ports.
func testKubernetesSettings() kubernetesSettings {
	p := &pki{dir: "/state/pki"}
	etcd := etcdSettings{Binary: "/tools/etcd", DataDir: "/state/etcd", ClientPort: 2379, PeerPort: 2380}
	return kubernetesSettings{
		Etcd:              etcd,
		APIServer:         apiServerSettings{Binary: "/tools/kube-apiserver", EtcdURL: etcd.clientURL(), Address: "127.0.0.1", Port: 6443, PKI: p},
		ControllerManager: controllerManagerSettings{Binary: "/tools/kcm", Kubeconfig: "/state/controller-manager.kubeconfig", Port: 10257, PKI: p, HPASyncPeriod: 15 * time.Second},
		Scheduler:         schedulerSettings{Binary: "/tools/sched", Kubeconfig: "/state/scheduler.kubeconfig", Port: 10259},
	}
}

// Kubernetes' own processes in the order Start relies on: etcd first (the
// API server's store), then the API server, ready by its /readyz as an
// admin, before the controllers that talk to it; the API server is given
// etcd's client URL.
func TestKubernetesSpecsStartInTheOrderTheyNeedEachOther(t *testing.T) {
	specs := kubernetesSpecs(testKubernetesSettings())
	var names []string
	for _, g := range specs {
		names = append(names, g.name)
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
	etcd := flagMap(t, etcdSpec(testKubernetesSettings().Etcd).args)
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
	g := controllerManagerSpec(s)
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
	if kcm["--kubeconfig"] != s.Kubeconfig || kcm["--service-account-private-key-file"] != "/state/pki/"+saKeyFile {
		t.Errorf("kubeconfig %q, SA key %q: want the settings'", kcm["--kubeconfig"], kcm["--service-account-private-key-file"])
	}
}

// KEDA's two processes: the environment they read, the adapter reading the
// operator's gRPC address, the certificates copied from the PKI, and with a
// resolv.conf both run under it (the operator writing it).
func TestKEDASpecsShareTheirEnvCertsAndResolver(t *testing.T) {
	s := kedaSettings{OperatorBinary: "/tools/keda-operator", AdapterBinary: "/tools/keda-adapter", Kubeconfig: "/state/kubeconfig",
		CertDir: "/state/keda-certs", PKI: &pki{dir: "/state/pki"}, MetricsPort: 1, HealthPort: 2, GRPCPort: 3, AdapterSecurePort: 4, AdapterMetricsPort: 5}
	op, ad := kedaOperatorSpec(s), kedaAdapterSpec(s)
	if op.name != "keda-operator" || ad.name != "keda-adapter" || op.binary != s.OperatorBinary || ad.binary != s.AdapterBinary {
		t.Errorf("processes %s (%s), %s (%s)", op.name, op.binary, ad.name, ad.binary)
	}
	for _, g := range []processSpec{op, ad} {
		for _, e := range []string{"KUBECONFIG=/state/kubeconfig", "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda"} {
			if !slices.Contains(g.env, e) {
				t.Errorf("%s's env %v lacks %s", g.name, g.env, e)
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
	if copied["/state/keda-certs/tls.key"] != "/state/pki/keda.key" || copied["/state/keda-certs/ca.crt"] != "/state/pki/"+kedaCA+".crt" {
		t.Errorf("the operator's files %v: want KEDA's CA and leaf from the PKI", copied)
	}

	s.ResolvConf = "/state/coredns/keda-resolv.conf"
	op, ad = kedaOperatorSpec(s), kedaAdapterSpec(s)
	for _, g := range []processSpec{op, ad} {
		if g.binary != "unshare" || !slices.Contains(g.args, s.ResolvConf) {
			t.Errorf("%s with a resolv.conf: %s %v, want it under unshare with %s", g.name, g.binary, g.args, s.ResolvConf)
		}
	}
	if conf := fileData(t, op, s.ResolvConf); !strings.HasPrefix(conf, "nameserver "+ClusterDNSAddress+"\n") {
		t.Errorf("KEDA's resolv.conf:\n%s\nwant only the cluster DNS", conf)
	}
}

// agent-sandbox's controller: its kubeconfig by flag and environment, no
// webhook, ready by /readyz on its health port.
func TestAgentSandboxSpec(t *testing.T) {
	g := agentSandboxSpec(agentSandboxSettings{Binary: "/tools/asc", Kubeconfig: "/state/kubeconfig", MetricsPort: 1, HealthPort: 2})
	f := flagMap(t, g.args)
	if g.name != "agent-sandbox-controller" || f["--enable-webhook"] != "false" || f["--extensions"] != "true" || !slices.Contains(g.env, "KUBECONFIG=/state/kubeconfig") {
		t.Errorf("%s: args %v env %v", g.name, g.args, g.env)
	}
	if g.ready.url != "http://127.0.0.1:2/readyz" {
		t.Errorf("ready by %q", g.ready.url)
	}
}

// KWOK reads the stages file it is given and manages only the annotated nodes.
func TestKWOKSpec(t *testing.T) {
	f := flagMap(t, kwokSpec(kwokSettings{Binary: "/tools/kwok", Kubeconfig: "/state/kubeconfig", Port: 7, StagesFile: "/state/kwok-stages.yaml"}).args)
	if f["--config"] != "/state/kwok-stages.yaml" || f["--manage-all-nodes"] != "false" || f["--cidr"] != host.KWOKPodCIDR {
		t.Errorf("kwok flags %v", f)
	}
}

// CoreDNS runs the Corefile it writes and is ready by its ready plugin.
func TestClusterDNSSpecRunsTheCorefileItWrites(t *testing.T) {
	g := clusterDNSSpec(clusterDNSSettings{Binary: "/tools/coredns", Dir: "/state/coredns", Kubeconfig: "/state/kubeconfig", HealthPort: 8, ReadyPort: 9})
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
	n := &realNode{name: "realnode-0", dir: "/state/realnode-0", cgroup: "localcluster-realnode-0", kubeletPort: 1, kubeletHealthPort: 2}
	g := kubeletSpec(kubeletSettings{Binary: "/tools/kubelet", Node: n, PKI: &pki{dir: "/state/pki"}})
	f := flagMap(t, g.args)
	if g.name != "realnode-0-kubelet" || f["--config"] != "/state/realnode-0/kubelet-config.yaml" || f["--kubeconfig"] != "/state/realnode-0/kubelet.kubeconfig" {
		t.Errorf("%s: %v", g.name, f)
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
	g := processSpec{name: "sleeper", binary: "/bin/sh", args: []string{"-c", `test "$(cat "$0")" = on && exec sleep 60`, conf},
		files: []file{{path: conf, data: "on"}}}
	proc, err := g.start(procs)
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

// The names the fault tests Kill and Restart (e2e/faults_test.go) are the
// names of processes a cluster with a real node starts: the process record
// knows them by these.
func TestFaultTestsNamesAreProcessSpecs(t *testing.T) {
	pl := &plane{realNodes: 1, without: map[string]bool{}, pki: &pki{dir: "/state/pki"}}
	var names []string
	for _, g := range kubernetesSpecs(testKubernetesSettings()) {
		names = append(names, g.name)
	}
	for _, a := range pl.addons() {
		for _, g := range a.processes {
			names = append(names, g.name)
		}
	}
	n := newRealNodes(&plane{stateDir: "/state"}, 1).nodes[0]
	names = append(names, kubeletSpec(kubeletSettings{Node: n, PKI: pl.pki}).name,
		containerdSpec(containerdSettings{Node: n}).name, kubeProxySpec(kubeProxySettings{}).name)
	for _, want := range []string{"keda-operator", "keda-adapter", "kube-controller-manager", "agent-sandbox-controller",
		RealNodeName(0) + "-kubelet", "kube-apiserver", "etcd", "coredns", RealNodeName(0) + "-containerd", "kube-proxy"} {
		if !slices.Contains(names, want) {
			t.Errorf("no process named %q (processes: %v)", want, names)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("two processes share a name (Kill and Restart take the first): %v", names)
	}
}

// Start's steps in the order each relies on the one before: the host's
// network before the API server (which listens on it with real nodes),
// Kubernetes before the objects and CRDs applied to it, those before the
// add-ons that read them, the add-ons (CRDs' controllers, the cluster DNS)
// before the nodes whose pods use them, and the readiness last.
func TestStartStepsRunInTheOrderTheyRelyOn(t *testing.T) {
	pl := &plane{realNodes: 1, without: map[string]bool{}, pki: &pki{dir: "/state/pki"}}
	var got []string
	for _, s := range pl.startSteps(nil) {
		got = append(got, s.what)
	}
	want := []string{
		"the host for the nodes",
		"etcd, kube-apiserver, kube-controller-manager, kube-scheduler",
		"the nodes' objects, runtime classes, CRDs and KEDA's APIService",
		"the add-ons (agent-sandbox-controller, cluster DNS, keda)",
		"the nodes (KWOK, kubelets)",
		"the whole chain to be ready",
	}
	if !slices.Equal(got, want) {
		t.Errorf("start steps:\n%q\nwant\n%q", got, want)
	}
}

// The scheduler authenticates and is authorized with its own kubeconfig and
// runs alone (no leader election).
func TestSchedulerSpec(t *testing.T) {
	s := testKubernetesSettings().Scheduler
	f := flagMap(t, schedulerSpec(s).args)
	for _, flag := range []string{"--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"} {
		if f[flag] != s.Kubeconfig {
			t.Errorf("%s=%q, want %s", flag, f[flag], s.Kubeconfig)
		}
	}
	if f["--leader-elect"] != "false" || f["--secure-port"] != "10259" {
		t.Errorf("scheduler flags %v", f)
	}
}
