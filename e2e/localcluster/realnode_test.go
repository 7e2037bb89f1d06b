package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// TestLiveRealNode starts a control plane with one real node and proves, through
// the API server, what runs there: runc pods on the node's kernel, gVisor for
// isolated-sandbox, Services, the projected token, the network-safety rules,
// and a teardown that leaves the machine as it found it, also after a kill.
func TestLiveRealNode(t *testing.T) {
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s=1: not starting the local control plane (this test proves nothing when skipped)", SkipEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatal("real nodes need root (containerd, the kubelet, a bridge, iptables rules): run the tests as root")
	}
	before := snapshotHost(t)
	c := startRealCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	nodeKernel := hostKernel(t)
	ns := newNamespace(t, c, "real")

	t.Run("a pod on a real node is Ready and exec through the API server reads the node's kernel under runc", func(t *testing.T) {
		pod := runPod(t, ctx, c, ns, "plain", "")
		got := execIn(t, ctx, c, ns, pod.Name, "uname", "-rv")
		if got != nodeKernel {
			t.Fatalf("runc pod's uname -rv = %q, want the node's %q", got, nodeKernel)
		}
		t.Logf("pod %s Ready on %s (pod IP %s); uname -rv via exec: %s", pod.Name, pod.Spec.NodeName, pod.Status.PodIP, got)
	})

	t.Run("an isolated-sandbox pod runs under gVisor: its own kernel, a fresh uptime, only loopback, no way out", func(t *testing.T) {
		pod := runPod(t, ctx, c, ns, "sandboxed", testIsolatedRuntimeClass)
		kernel := execIn(t, ctx, c, ns, pod.Name, "uname", "-rv")
		if kernel == nodeKernel {
			t.Fatalf("isolated-sandbox pod shows the node's kernel %q: not isolated", kernel)
		}
		uptime := execIn(t, ctx, c, ns, pod.Name, "cat", "/proc/uptime")
		if len(strings.Fields(uptime)) == 0 {
			t.Fatalf("/proc/uptime read as %q", uptime)
		}
		up, err := strconv.ParseFloat(strings.Fields(uptime)[0], 64)
		if err != nil {
			t.Fatalf("reading /proc/uptime %q: %v", uptime, err)
		}
		age := time.Since(pod.CreationTimestamp.Time).Seconds() + 1 // creation time is whole seconds
		if up >= age {
			t.Fatalf("uptime %.1fs is not shorter than the pod's age %.1fs: the kernel did not boot with the pod", up, age)
		}
		addrs, out, code := requireLoopbackOnlyAndNoWayOut(t, ctx, c, ns, pod.Name, "the sandbox")
		t.Logf("gVisor pod: uname -rv %q (node %q); uptime %.2fs at age %.1fs; addresses %q; outbound request: %s (exit %d)", kernel, nodeKernel, up, age, addrs, out, code)
	})

	t.Run("the same pod under runc with only loopback shows the node's kernel: the stand-in is told apart from no isolation", func(t *testing.T) {
		pod := runPod(t, ctx, c, ns, "unisolated", LoopbackOnlyRuntimeClass)
		kernel := execIn(t, ctx, c, ns, pod.Name, "uname", "-rv")
		if kernel != nodeKernel {
			t.Fatalf("runc pod's kernel %q is not the node's %q", kernel, nodeKernel)
		}
		addrs, out, _ := requireLoopbackOnlyAndNoWayOut(t, ctx, c, ns, pod.Name, "the loopback-only runc pod")
		t.Logf("runc, loopback only: uname -rv %q = the node's; addresses %q; outbound request: %s", kernel, addrs, out)
	})

	t.Run("a ClusterIP Service reaches a pod from a host process and from another pod", func(t *testing.T) {
		web := runPodSpec(t, ctx, c, ns, "web", corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: SandboxImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"sh", "-c", "mkdir -p /tmp/www && echo hello-from-web > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"},
		}}}, map[string]string{"app": "web"})
		svc, err := c.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + svc.Spec.ClusterIP + "/"
		if !strings.HasPrefix(svc.Spec.ClusterIP, "198.19.") {
			t.Fatalf("ClusterIP %s is outside %s", svc.Spec.ClusterIP, host.ServiceCIDR)
		}
		var body string
		waitUntil(t, ctx, "the Service to answer a host process at "+url, 60*time.Second, func(ctx context.Context) (bool, error) {
			resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
			if err != nil {
				return false, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = strings.TrimSpace(string(b))
			return body == "hello-from-web", nil
		})
		client := runPod(t, ctx, c, ns, "client", "")
		out, code := execCode(t, ctx, c, ns, client.Name, "httpprobe", url)
		if code != 0 || out != "HTTP 200" {
			t.Fatalf("from pod %s, httpprobe %s: %q (exit %d), want HTTP 200", client.Name, url, out, code)
		}
		t.Logf("Service %s (%s -> pod %s %s:8080): host process read %q; pod %s: %s", svc.Name, svc.Spec.ClusterIP, web.Name, web.Status.PodIP, body, client.Name, out)
	})

	t.Run("a pod reaches the API server through the kubernetes Service with its projected token", func(t *testing.T) {
		grantRole(t, c, ns, "read-pods", "default", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}})
		pod := runPod(t, ctx, c, ns, "apiclient", "")
		url := fmt.Sprintf("https://%s:443/api/v1/namespaces/%s/pods/%s", host.KubernetesServiceIP, ns, pod.Name)
		const token = "/var/run/secrets/kubernetes.io/serviceaccount/token"
		with, code := execCode(t, ctx, c, ns, pod.Name, "sh", "-c", "HTTPPROBE_TOKEN_FILE="+token+" httpprobe "+url)
		if code != 0 || with != "HTTP 200" {
			t.Fatalf("GET own pod with the projected token: %q (exit %d), want HTTP 200", with, code)
		}
		without, _ := execCode(t, ctx, c, ns, pod.Name, "httpprobe", url)
		if without == "HTTP 200" {
			t.Fatalf("the same request without the token was allowed too: the token proved nothing")
		}
		t.Logf("pod %s -> %s: with its projected token %s, without %s", pod.Name, url, with, without)
	})

	t.Run("a request from a bridged pod to an outside address is rejected on the host", func(t *testing.T) {
		pod := runPod(t, ctx, c, ns, "egress", "")
		beforeCount := rejectCount(t)
		// TEST-NET-3: an outside address that is never anyone's.
		out, code := execCode(t, ctx, c, ns, pod.Name, "httpprobe", "http://203.0.113.10/")
		afterCount := rejectCount(t)
		if code == 0 {
			t.Fatalf("a request to an outside address got an answer: %s", out)
		}
		if afterCount <= beforeCount {
			t.Fatalf("the request failed (%s) but the host's reject rule counted no packet (%d -> %d): it was not the rule that stopped it", out, beforeCount, afterCount)
		}
		t.Logf("pod %s -> 203.0.113.10: %s (exit %d); %s's reject rule counted %d -> %d packets", pod.Name, out, code, host.ForwardChain, beforeCount, afterCount)
	})

	logNodeMemory(t, c.StateDir)

	// Killed halfway: every process of the control plane dies at once, with
	// pods running; the next start with real nodes must clean what is left.
	first := c.StateDir
	procs, err := process.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs.All() {
		if p.Alive() {
			_ = syscall.Kill(p.Pid, syscall.SIGKILL)
		}
	}
	time.Sleep(time.Second)
	if len(host.ProcessesNaming(first)) == 0 {
		t.Fatal("no shim or sandbox process survived the kill: the leftover cleanup would be tested on nothing")
	}
	c.plane.Procs.Forget()
	c.kinds = nil // this handle must not clean up: the next start must
	t.Logf("killed the control plane's processes; left behind: %d runtime processes, %d mounts under the state dir", len(host.ProcessesNaming(first)), len(host.MountsUnder(first)))

	second := startRealCluster(t)
	if left := host.ProcessesNaming(first); len(left) > 0 {
		t.Fatalf("the next start left processes of the killed one running: %v", left)
	}
	if left := host.MountsUnder(first); len(left) > 0 {
		t.Fatalf("the next start left mounts of the killed one: %v", left)
	}
	if err := second.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	after := snapshotHost(t)
	if diff := diffSnapshots(before, after); diff != "" {
		t.Fatalf("teardown left the machine changed:\n%s", diff)
	}
	t.Logf("teardown: the machine's interfaces, routes, iptables rules, mounts, cgroups, sysctls and node processes are as before the test")
}

func startRealCluster(t *testing.T) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	// KEDA plays no part in what a real node proves.
	c, err := Start(ctx, Options{StateDir: t.TempDir(), RealNodes: 1, IsolatedRuntimeClass: testIsolatedRuntimeClass, Without: []string{"keda"}, Progress: testWriter{t}})
	if err != nil {
		t.Fatalf("starting a control plane with a real node: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, c)
			for _, n := range []string{"realnode-0-kubelet", "realnode-0-containerd", "kube-proxy"} {
				if b, err := os.ReadFile(c.Log(n)); err == nil {
					t.Logf("=== last lines of %s ===\n%s", n, process.Tail(string(b), 3000))
				}
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	return c
}

func hostKernel(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("uname", "-rv").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func runPod(t *testing.T, ctx context.Context, c *Cluster, ns, name, runtimeClass string) *corev1.Pod {
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Image: SandboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"},
	}}}
	if runtimeClass != "" {
		spec.RuntimeClassName = &runtimeClass
	}
	return runPodSpec(t, ctx, c, ns, name, spec, nil)
}

// runPodSpec creates a pod on real node 0 and waits until it is Ready.
func runPodSpec(t *testing.T, ctx context.Context, c *Cluster, ns, name string, spec corev1.PodSpec, labels map[string]string) *corev1.Pod {
	t.Helper()
	zero := int64(0)
	spec.TerminationGracePeriodSeconds = &zero
	spec.NodeSelector = map[string]string{procspec.RealNodeLabel: "true"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}
	start := time.Now()
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	waitUntil(t, ctx, "pod "+name+" to be Ready on a real node", 120*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, fmt.Errorf("phase %s, conditions %v, container statuses %v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
	})
	t.Logf("pod %s (runtime class %q) Ready %s after create", name, ptrString(spec.RuntimeClassName), time.Since(start).Round(10*time.Millisecond))
	return got
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func execIn(t *testing.T, ctx context.Context, c *Cluster, ns, pod string, cmd ...string) string {
	t.Helper()
	out, code := execCode(t, ctx, c, ns, pod, cmd...)
	if code != 0 {
		t.Fatalf("exec %v in %s: exit %d: %s", cmd, pod, code, out)
	}
	return out
}

// execCode runs cmd in the pod through the API server (the kubelet's exec,
// as kubectl exec does) and returns its trimmed output and exit code.
func execCode(t *testing.T, ctx context.Context, c *Cluster, ns, pod string, cmd ...string) (string, int) {
	t.Helper()
	req := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL())
	if err != nil {
		t.Fatal(err)
	}
	// One buffer each: stdout and stderr are copied by two goroutines.
	var out, errOut bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	out.Write(errOut.Bytes())
	code := 0
	if err != nil {
		var exit interface{ ExitStatus() int }
		if e, ok := err.(interface{ ExitStatus() int }); ok {
			exit = e
		}
		if exit == nil {
			t.Fatalf("exec %v in %s through the API server: %v (output %q)", cmd, pod, err, out.String())
		}
		code = exit.ExitStatus()
	}
	return strings.TrimSpace(out.String()), code
}

// rejectCount is the packet counter of the rule that rejects pods' traffic
// to outside addresses.
func rejectCount(t *testing.T) int64 {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-t", "filter", "-L", host.ForwardChain, "-v", "-x", "-n").Output()
	if err != nil {
		t.Fatalf("reading %s: %v", host.ForwardChain, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "REJECT") {
			n, err := strconv.ParseInt(strings.Fields(line)[0], 10, 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no REJECT rule in %s:\n%s", host.ForwardChain, out)
	return 0
}

// hostSnapshot is what a real node may change on the machine.
type hostSnapshot map[string][]string

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

func snapshotHost(t *testing.T) hostSnapshot {
	t.Helper()
	lines := func(name string, args ...string) []string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		var l []string
		for _, s := range strings.Split(string(out), "\n") {
			if s = strings.TrimSpace(s); s != "" && !strings.HasPrefix(s, "#") {
				l = append(l, counters.ReplaceAllString(s, ""))
			}
		}
		sort.Strings(l)
		return l
	}
	s := hostSnapshot{
		"interfaces": lines("ip", "-o", "link", "show"),
		"addresses":  lines("ip", "-o", "addr", "show"),
		"routes":     lines("ip", "route", "show", "table", "all"),
		"iptables":   lines("iptables-save"),
		"ip6tables":  lines("ip6tables-save"),
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, m := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(m); len(f) > 4 {
			s["mounts"] = append(s["mounts"], f[4])
		}
	}
	sort.Strings(s["mounts"])
	for _, m := range host.CgroupMounts() {
		entries, _ := os.ReadDir(m)
		for _, e := range entries {
			if e.IsDir() {
				s["cgroups"] = append(s["cgroups"], filepath.Join(m, e.Name()))
			}
		}
	}
	for _, name := range []string{"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "net/ipv4/conf/all/route_localnet",
		"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
		"net/netfilter/nf_conntrack_max", "net/netfilter/nf_conntrack_tcp_timeout_established"} {
		b, _ := os.ReadFile("/proc/sys/" + name)
		s["sysctls"] = append(s["sysctls"], name+"="+strings.TrimSpace(string(b)))
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		if host.NodePrograms[filepath.Base(argv0)] {
			s["node processes"] = append(s["node processes"], d.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	for _, f := range []string{"/run/containerd/s", "/run/netns"} {
		entries, _ := os.ReadDir(f)
		for _, e := range entries {
			s["runtime files"] = append(s["runtime files"], filepath.Join(f, e.Name()))
		}
	}
	return s
}

func diffSnapshots(before, after hostSnapshot) string {
	var b strings.Builder
	for _, k := range []string{"interfaces", "addresses", "routes", "iptables", "ip6tables", "mounts", "cgroups", "sysctls", "node processes", "runtime files"} {
		was := map[string]bool{}
		for _, l := range before[k] {
			was[l] = true
		}
		now := map[string]bool{}
		for _, l := range after[k] {
			now[l] = true
			if !was[l] {
				fmt.Fprintf(&b, "%s: + %s\n", k, l)
			}
		}
		for _, l := range before[k] {
			if !now[l] {
				fmt.Fprintf(&b, "%s: - %s\n", k, l)
			}
		}
	}
	return b.String()
}

// logNodeMemory reports the resident memory of the real node's processes
// (a measurement for the README, not an assertion).
func logNodeMemory(t *testing.T, stateDir string) {
	total := map[string]int64{}
	var sum int64
	for _, pid := range host.ProcessesNaming(stateDir) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv0, _, _ := strings.Cut(string(cmd), "\x00")
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total[filepath.Base(argv0)] += kb
				sum += kb
			}
		}
	}
	t.Logf("real node memory (RSS, with the pods of this test running): %d MiB in all; by program (KiB): %v", sum/1024, total)
}

// requireLoopbackOnlyAndNoWayOut fails the test unless the pod has no interface
// besides loopback and a request to the API server's pod-network address gets
// no answer; it returns what it read, for the log.
func requireLoopbackOnlyAndNoWayOut(t *testing.T, ctx context.Context, c *Cluster, ns, pod, what string) (addrs, out string, code int) {
	t.Helper()
	addrs = execIn(t, ctx, c, ns, pod, "ip", "-o", "addr")
	for _, line := range strings.Split(addrs, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] != "lo" {
			t.Fatalf("%s has an interface besides loopback:\n%s", what, addrs)
		}
	}
	out, code = execCode(t, ctx, c, ns, pod, "httpprobe", "http://"+host.PodAddress+":"+strconv.Itoa(c.plane.Ports.APIServer)+"/")
	if code == 0 {
		t.Fatalf("an outbound request from %s got an answer: %s", what, out)
	}
	return addrs, out, code
}
