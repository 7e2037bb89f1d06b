package e2e

// The product on a real node, with no stand-ins for its parts: the exporter is the Deployment
// `pulumi up` creates (both of its paths), KEDA reads it at the URL the program exports (the
// Service's cluster DNS name, through cluster DNS and kube-proxy), the warm sandboxes run under
// gVisor, and verify execs into them.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// exporterImageRef is the reference the image path's stack config names; the image is built
// locally and imported into the node under it (a registry would serve it on EKS).
const exporterImageRef = "warmpool.local/claim-exporter:e2e"

// exporterPods selects the exporter's pods (the Deployment's selector).
var exporterPods = metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + contract.ExporterName}

// outsideProbeURL is an address outside the machine: the network-safety rules reject it, so
// nothing leaves even if a sandbox had a route.
const outsideProbeURL = "http://1.1.1.1/"

// realEnv is a stack of the product as a user deploys it, on a control plane with one real node:
// the exporter is the Deployment the program creates.
type realEnv struct{ stackRun }

// realNodeHint is added to a failed start of a control plane with a real node.
const realNodeHint = "\n(real nodes need Linux, root and apt for their Debian packages: see e2e/README.md, \"Real nodes\")"

// newRealEnv starts a control plane of its own with one real node and the stack "realnode" on
// it: the exporter cold-start benchmark's run.
func newRealEnv(t testing.TB, ctx context.Context) *realEnv {
	work := t.TempDir()
	c := startCluster(t, ctx, work, localcluster.Options{RealNodes: 1, SkipWarmPoolCheck: true}, realNodeHint)
	return newDeployedEnv(t, ctx, c, work, "realnode", nil)
}

// newDeployedEnv is the stack stackName on the control plane c (which has a real node), as a user
// deploys it (framework.RealNodeStackConfig), its config changed by with (nil: none).
func newDeployedEnv(t testing.TB, ctx context.Context, c *localcluster.Cluster, work, stackName string, with map[string]string) *realEnv {
	return &realEnv{newStackRun(t, ctx, c, work, stackName, func(kubeconfig []byte) map[string]string {
		cfg := framework.RealNodeStackConfig(kubeconfig)
		for k, v := range with {
			cfg[k] = v
		}
		return cfg
	})}
}

// waitExporterRolledOut waits until the Deployment's current template has one available
// replica and no old ones, and returns its running pod.
func (e *realEnv) waitExporterRolledOut(ctx context.Context, t testing.TB, timeout time.Duration) *corev1.Pod {
	// The exporter lives in the stack's namespace: the one pool's, or its own beside listed pools.
	ns := e.outputs.String("stackNamespace")
	if err := framework.WaitDeploymentAvailable(ctx, e.cluster.Client, ns, contract.ExporterName, timeout); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	framework.Eventually(t, ctx, "the exporter's running pod", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.cluster.Client.CoreV1().Pods(ns).List(ctx, exporterPods)
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				pod = p
				return true, nil
			}
		}
		return false, fmt.Errorf("no running exporter pod")
	})
	return pod
}

// serviceURL resolves the URL the program exports with the cluster DNS (as KEDA does) and
// returns it with the host name replaced by the address it resolved to.
func (e *realEnv) serviceURL(ctx context.Context, t testing.TB) string {
	u := e.outputs.String("exporterUrl")
	want := fmt.Sprintf("http://%s.%s.svc.cluster.local:%d%s", contract.ExporterName, e.ns, contract.ExporterPort, contract.DemandPath)
	if u != want {
		t.Fatalf("exporterUrl output %q, want the Service's cluster DNS name %q (no override)", u, want)
	}
	host := fmt.Sprintf("%s.%s.svc.cluster.local", contract.ExporterName, e.ns)
	addrs, err := e.cluster.LookupClusterDNS(ctx, host)
	if err != nil || len(addrs) != 1 {
		t.Fatalf("cluster DNS for %s: %v %v", host, addrs, err)
	}
	svc, err := e.cluster.Client.CoreV1().Services(e.ns).Get(ctx, contract.ExporterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if addrs[0] != svc.Spec.ClusterIP {
		t.Fatalf("cluster DNS answers %s for %s, the Service's ClusterIP is %s", addrs[0], host, svc.Spec.ClusterIP)
	}
	return strings.Replace(u, host, addrs[0], 1)
}

// deployedSteps run on the stack as `pulumi up` first deploys it, the exporter running its source:
// up, verify with the eight readings, an eviction and a restart of the exporter, the move to the
// prebuilt image (imported by the caller under exporterImageRef) and Pod Security. The control
// plane's faults run on it afterwards, alone.
func (e *realEnv) deployedSteps(verifyBin string) []step {
	var demandURL string
	return []step{
		{"pulumi up: the exporter runs its source (go run) on the real node and serves through its Service", func(ctx context.Context, t *testing.T) {
			e.upStack(ctx, t)
			pod := e.waitExporterRolledOut(ctx, t, 20*time.Minute)
			node, err := e.cluster.Client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
			if err != nil || node.Labels[localcluster.RealNodeLabel] != "true" {
				t.Fatalf("exporter pod %s is on node %q, not a real node (%v)", pod.Name, pod.Spec.NodeName, err)
			}
			if pod.Spec.Containers[0].Image != contract.ExporterGoImage {
				t.Errorf("the default path's pod runs %s, want %s", pod.Spec.Containers[0].Image, contract.ExporterGoImage)
			}
			e.podIPsAreUnique(ctx, t)
			demandURL = e.serviceURL(ctx, t)
			framework.Eventually(t, ctx, "the exporter's Service to serve a fresh count of 0", time.Minute, func(context.Context) (bool, error) {
				d, err := framework.Demand(demandURL)
				return err == nil && d.ActiveClaims == 0 && d.Fresh, err
			})
		}},
		{"verify: the eight readings on the real node, 0 SKIP (gVisor: virtio and DMI N/A, the rest PASS)", func(ctx context.Context, t *testing.T) {
			rep, code := e.runVerify(ctx, t, verifyBin, "real-verify", "--phase", "all", "--require-exec", "--probe-url", outsideProbeURL)
			if code != 0 || rep.Failed != 0 {
				t.Errorf("verify exited %d with %d failed", code, rep.Failed)
			}
			checkReadings(t, rep, map[string]report.Status{
				"exec into the claimed pod works":            report.Pass,
				"the claimed pod runs its own kernel":        report.Pass,
				"the guest booted after the pod was created": report.Pass,
				"the claimed pod sees virtio block devices":  report.NA,
				"the DMI product name is the sandbox's own":  report.NA,
				"only loopback has an address":               report.Pass,
				"no default route in either family":          report.Pass,
				"an outbound request fails":                  report.Pass,
			})
			for _, c := range rep.Checks {
				if c.Status == report.Skip && !onePoolCrossPoolSkip(rep, c) {
					t.Errorf("check %q skipped on a real node: %s", c.Name, c.Evidence)
				}
			}
			checkScaleSteps(t, rep)
		}},
		{"an evicted exporter replica: the Service serves 2 on every read, and the budget refuses a second eviction", func(ctx context.Context, t *testing.T) {
			e.evictionKeepsTheCountReadable(ctx, t, demandURL)
		}},
		{"a restarted exporter never serves 0: every 200, from the new pod or the Service, says 2", func(ctx context.Context, t *testing.T) {
			e.restartNeverServesZero(ctx, t, demandURL)
		}},
		{"the prebuilt image path: exporterImage built ko-style, imported under its reference, serves", func(ctx context.Context, t *testing.T) {
			e.config["exporterImage"] = exporterImageRef
			if err := e.stack.SetConfig(ctx, e.config); err != nil {
				t.Fatal(err)
			}
			e.upStack(ctx, t)
			pod := e.waitExporterRolledOut(ctx, t, 5*time.Minute)
			if got := pod.Spec.Containers[0].Image; got != exporterImageRef {
				t.Fatalf("after up with exporterImage the pod runs %s, want %s", got, exporterImageRef)
			}
			framework.Eventually(t, ctx, "the image path's exporter to serve a fresh count of 0 through the Service", time.Minute, func(context.Context) (bool, error) {
				d, err := framework.Demand(demandURL)
				return err == nil && d.ActiveClaims == 0 && d.Fresh, err
			})
			e.restartNeverServesZero(ctx, t, demandURL)
			// The image has no uname, so verify's ordinary pod cannot be read (as on EKS): the
			// kernel is compared with the node's instead, and still passes only for a sandbox.
			rep, code := e.runVerify(ctx, t, verifyBin, "image-verify", "--phase", "demand", "--require-exec", "--probe-url", outsideProbeURL)
			if code != 0 || rep.Failed != 0 {
				t.Errorf("verify with the image path's exporter exited %d with %d failed", code, rep.Failed)
			}
			checkReadings(t, rep, map[string]report.Status{"the claimed pod runs its own kernel": report.Pass})
			if out, err := os.ReadFile(filepath.Join(e.work, "image-verify.txt")); err != nil || !strings.Contains(string(out), "has no uname to run") {
				t.Errorf("verify did not say it compared with the node's kernel because the exporter's image has no uname (%v)", err)
			}
		}},
		{"Pod Security: the namespace enforces restricted, rejects a pod that breaks it, and the exporter runs under it", func(ctx context.Context, t *testing.T) {
			e.podSecurityEnforced(ctx, t)
		}},
	}
}

// poolSteps run on a second stack beside the deployed one, on the exporter image its first up
// builds and publishes to reg: the move to two pools and verify per pool and across pools, then
// destroy.
func (e *realEnv) poolSteps(verifyBin string, reg *framework.Registry) []step {
	return []step{
		{"pulumi up of a one-pool stack that builds the exporter's image, pushes it to a registry on loopback and runs it by digest", func(ctx context.Context, t *testing.T) {
			e.upOnPublishedImage(ctx, t, reg)
		}},
		{"two pools from config (different images and sizes): the stack moves from the shorthand, verify passes per pool and across pools", func(ctx context.Context, t *testing.T) {
			e.twoPools(ctx, t, verifyBin)
		}},
		{"pulumi destroy removes the stack and leaves none of its namespaces", func(ctx context.Context, t *testing.T) {
			e.destroyLeavesNothing(ctx, t)
		}},
	}
}

// exporterFaultSteps run on a stack of their own beside the others, on the prebuilt image (as
// the deployed stack runs after its image path): up, the exporter's faults (every replica down,
// the static-fallback reject), the runc reject run (last before destroy: it patches the template
// outside Pulumi), destroy. Nothing they stop or patch is shared.
func (e *realEnv) exporterFaultSteps(verifyBin string) []step {
	return []step{
		{"pulumi up of a one-pool stack on the prebuilt exporter image", e.upOnPrebuiltImage},
		{"every exporter replica down while 2 claims are held, and the static-fallback reject", e.exporterFaults},
		{"reject: a pool whose runtime is runc fails the kernel and uptime readings", func(ctx context.Context, t *testing.T) {
			e.runcRejected(ctx, t, verifyBin)
		}},
		{"pulumi destroy removes the stack and leaves none of its namespaces", e.destroyLeavesNothing},
	}
}

// upOnPrebuiltImage runs up on a stack whose config names exporterImageRef and checks that the
// exporter's pod runs it.
func (e *realEnv) upOnPrebuiltImage(ctx context.Context, t *testing.T) {
	e.upStack(ctx, t)
	if pod := e.waitExporterRolledOut(ctx, t, 5*time.Minute); pod.Spec.Containers[0].Image != exporterImageRef {
		t.Fatalf("the exporter pod runs %s, want %s", pod.Spec.Containers[0].Image, exporterImageRef)
	}
}

// upOnPublishedImage runs up on a stack whose config names a repository in reg, and checks the
// whole image path as production runs it: the stack built the image (the digest a build of this
// source gives), pushed it with the docker config's credentials, and the node's containerd pulled
// that digest from the registry for the exporter's pod, which then served.
func (e *realEnv) upOnPublishedImage(ctx context.Context, t *testing.T, reg *framework.Registry) {
	e.upStack(ctx, t)
	built, err := exporterimage.Build(ctx, exporterimage.DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	repository := e.config["exporterImageRepository"]
	path := strings.TrimPrefix(repository, reg.Host+"/")
	if pushed := reg.ManifestPushes(); !slices.Contains(pushed, path+"/manifests/"+exporterimage.Tag(built.Digest)) {
		t.Fatalf("the registry holds no push of %s:%s (pushes: %v)", repository, exporterimage.Tag(built.Digest), pushed)
	}
	pod := e.waitExporterRolledOut(ctx, t, 5*time.Minute)
	if want := exporterimage.Reference(repository, built.Digest); pod.Spec.Containers[0].Image != want {
		t.Fatalf("the exporter pod runs %s, want %s", pod.Spec.Containers[0].Image, want)
	}
	if reads := reg.ManifestReads(); !slices.Contains(reads, path+"/manifests/"+built.Digest.String()) {
		t.Fatalf("the node never fetched %s@%s from the registry (manifest reads: %v)", repository, built.Digest, reads)
	}
	if st := pod.Status.ContainerStatuses; len(st) != 1 || !strings.HasSuffix(st[0].ImageID, "@"+built.Digest.String()) {
		t.Fatalf("the container runs image %v, want digest %s", st, built.Digest)
	}
	var scheduled, ready time.Time
	for _, c := range pod.Status.Conditions {
		switch c.Type {
		case corev1.PodScheduled:
			scheduled = c.LastTransitionTime.Time
		case corev1.PodReady:
			if c.Status == corev1.ConditionTrue {
				ready = c.LastTransitionTime.Time
			}
		}
	}
	t.Logf("the exporter pod pulled %s and was Ready %s after it was scheduled (whole seconds: the API's condition times)", built.Digest, ready.Sub(scheduled))
}

// destroyLeavesNothing runs pulumi destroy and waits until none of the namespaces the stack
// owned (its own, and each listed pool's) exists.
func (e *realEnv) destroyLeavesNothing(ctx context.Context, t *testing.T) {
	if _, err := e.stack.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	// Every namespace the last up's outputs name: the stack's, and each pool's.
	stack := e.outputs.String("stackNamespace")
	namespaces := []string{stack}
	pools, _ := e.outputs.Values["pools"].([]any)
	for _, p := range pools {
		m, _ := p.(map[string]any)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			t.Fatalf("the stack's pools output has an entry without a namespace: %v", p)
		}
		if ns != stack {
			namespaces = append(namespaces, ns)
		}
	}
	if stack == "" || len(pools) == 0 {
		t.Fatalf("the stack's outputs name no namespace to check (stackNamespace %q, pools %v)", stack, e.outputs.Values["pools"])
	}
	e.nothingLeft(ctx, t, namespaces)
}

// runcRejected points the stack's pool at runc (loopback only) and runs verify's demand phase with
// the exec readings: verify must FAIL the kernel and uptime readings (exit 1), so a pool that is
// not a sandbox cannot pass. extra are verify's further arguments. The pool goes back to the
// stack's RuntimeClass after.
func (e *stackRun) runcRejected(ctx context.Context, t *testing.T, verifyBin string, extra ...string) {
	e.runcPool(ctx, t)
	rep, code := e.runVerify(ctx, t, verifyBin, "runc-verify", append([]string{"--phase", "demand", "--require-exec", "--probe-url", outsideProbeURL}, extra...)...)
	if code != 1 {
		t.Errorf("verify against a runc pool exited %d, want 1", code)
	}
	checkReadings(t, rep, map[string]report.Status{
		"the claimed pod runs its own kernel":        report.Fail,
		"the guest booted after the pod was created": report.Fail,
	})
	// Back to the stack's own runtime class, by the same field manager: an apply by Pulumi
	// would conflict with the patch's ownership of the field.
	e.setPoolRuntimeClass(ctx, t, contract.RuntimeClassName)
}

// checkReadings asserts the status of each named check.
func checkReadings(t *testing.T, rep *report.Report, want map[string]report.Status) {
	t.Helper()
	got := map[string]report.Check{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	for name, status := range want {
		c, ok := got[name]
		switch {
		case !ok:
			t.Errorf("check %q is not in the report", name)
		case c.Status != status:
			t.Errorf("check %q: %s, want %s (%s)", name, c.Status, status, c.Evidence)
		}
	}
}

// runcPool points the stack's SandboxTemplate at the runc, loopback-only RuntimeClass (the same
// network as a sandbox, the node's kernel) and replaces the warm sandboxes with ones made from it.
func (e *stackRun) runcPool(ctx context.Context, t *testing.T) {
	e.setPoolRuntimeClass(ctx, t, localcluster.LoopbackOnlyRuntimeClass)
}

// setPoolRuntimeClass points the stack's SandboxTemplate at a RuntimeClass and replaces the warm
// sandboxes with ones made from it, waiting until the pool's pods all run it and one is Ready.
func (e *stackRun) setPoolRuntimeClass(ctx context.Context, t *testing.T, runtimeClass string) {
	tmpl := e.outputs.String("templateName")
	patch := fmt.Sprintf(`{"spec":{"podTemplate":{"spec":{"runtimeClassName":%q}}}}`, runtimeClass)
	if _, err := e.cluster.Dynamic.Resource(gvr.SandboxTemplate).Namespace(e.ns).Patch(ctx, tmpl, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching template %s: %v", tmpl, err)
	}
	if err := e.cluster.Dynamic.Resource(gvr.Sandbox).Namespace(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deleting the warm sandboxes: %v", err)
	}
	framework.Eventually(t, ctx, "the pool's pods to run RuntimeClass "+runtimeClass+", one of them Ready", 3*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods.Items {
			if p.Spec.RuntimeClassName == nil || p.DeletionTimestamp != nil {
				continue
			}
			if *p.Spec.RuntimeClassName != runtimeClass {
				// The controller can make a sandbox from the template it read before the patch,
				// after the delete above (seen once in 5 runs: the pod stayed 3 min): delete
				// that one too, by its owner's name, and read again.
				for _, o := range p.OwnerReferences {
					if o.Kind == "Sandbox" {
						err := e.cluster.Dynamic.Resource(gvr.Sandbox).Namespace(e.ns).Delete(ctx, o.Name, metav1.DeleteOptions{})
						if err != nil && !apierrors.IsNotFound(err) {
							return false, fmt.Errorf("pod %s still runs %s; deleting its sandbox %s: %v", p.Name, *p.Spec.RuntimeClassName, o.Name, err)
						}
					}
				}
				return false, fmt.Errorf("pod %s still runs %s (its sandbox deleted again)", p.Name, *p.Spec.RuntimeClassName)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready > 0, nil
	})
}

// restartNeverServesZero deletes the exporter's pod while 2 claims exist, then reads both the
// Service and the new pod itself (by its pod IP, before and after it is Ready) until the new pod
// has served a count: every 200 from either must say 2; the new pod's other answers (no
// listener while it starts, 503 before its first read) are tallied and printed.
func (e *realEnv) restartNeverServesZero(ctx context.Context, t *testing.T, demandURL string) {
	defer e.holdClaims(ctx, t, "restart-1", "restart-2")()
	waitCounted(ctx, t, demandURL, 2)
	old, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, exporterPods)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, p := range old.Items {
		gone[p.Name] = true
		if err := e.cluster.Client.CoreV1().Pods(e.ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	viaService, viaPod := map[string]int{}, map[string]int{}
	// judge tallies one answer and fails the test on a 200 whose count is not 2.
	judge := func(from string, tally map[string]int, code int, body string) bool {
		if code == 0 {
			tally["no answer"]++
			return false
		}
		tally[fmt.Sprint(code)]++
		if code != http.StatusOK {
			return false
		}
		var d struct {
			ActiveClaims int64 `json:"active_claims"`
		}
		if err := json.Unmarshal([]byte(body), &d); err != nil || d.ActiveClaims != 2 {
			t.Errorf("%s: a restarting exporter answered 200 with %q (%v), want a count of 2 or no count", from, body, err)
			return false
		}
		return true
	}
	framework.Eventually(t, ctx, "the new exporter pod to serve a count, read directly and through the Service", 20*time.Minute, func(ctx context.Context) (bool, error) {
		svcCode, svcBody := framework.HTTPGet(demandURL)
		serviceServed := judge("the Service", viaService, svcCode, svcBody)
		pods, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, exporterPods)
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if gone[p.Name] || p.Status.PodIP == "" {
				continue
			}
			url := "http://" + p.Status.PodIP + ":" + strconv.Itoa(contract.ExporterPort) + contract.DemandPath
			code, body := framework.HTTPGet(url)
			if judge("new pod "+p.Name, viaPod, code, body) && serviceServed {
				return true, nil
			}
			return false, fmt.Errorf("new pod %s answered %d %.80s; the Service %d %.80s", p.Name, code, body, svcCode, svcBody)
		}
		return false, fmt.Errorf("no new exporter pod with an address yet; the Service answered %d %.80s", svcCode, svcBody)
	})
	t.Logf("restart: the new pod served 2 after %s; its answers meanwhile %v; the Service's %v", time.Since(start).Round(time.Second), viaPod, viaService)
}

// waitCounted waits until the exporter at demandURL counts n claims.
func waitCounted(ctx context.Context, t testing.TB, demandURL string, n int64) {
	framework.Eventually(t, ctx, fmt.Sprintf("the exporter to count the %d claims", n), time.Minute, func(context.Context) (bool, error) {
		d, err := framework.Demand(demandURL)
		return err == nil && d.ActiveClaims == n, err
	})
}

// podIPsAreUnique fails when two live pods report one IP: the exporter (on the bridge) and the
// gVisor sandboxes (loopback-only) take addresses from one allocator, as pods on EKS do.
func (e *realEnv) podIPsAreUnique(ctx context.Context, t *testing.T) {
	pods, err := e.cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil || p.Spec.HostNetwork {
			continue
		}
		if other, ok := owner[p.Status.PodIP]; ok {
			t.Errorf("pods %s and %s/%s both have IP %s", other, p.Namespace, p.Name, p.Status.PodIP)
		}
		owner[p.Status.PodIP] = p.Namespace + "/" + p.Name
	}
	t.Logf("pod IPs: %v", owner)
}

// podSecurityEnforced checks the namespace's Pod Security level, that the API server rejects a
// pod breaking it (a server-side dry run: admission runs, nothing is created), and that the
// exporter's pod was admitted under it and is running.
func (e *realEnv) podSecurityEnforced(ctx context.Context, t *testing.T) {
	ns, err := e.cluster.Client.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace %s: pod-security.kubernetes.io/enforce=%q, want restricted (labels %v)", e.ns, got, ns.Labels)
	}
	root, privileged := int64(0), true
	bad := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "breaks-restricted", Namespace: e.ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "root", Image: contract.WarmPodImage, Command: []string{"sleep", "60"},
			SecurityContext: &corev1.SecurityContext{RunAsUser: &root, Privileged: &privileged},
		}}},
	}
	_, err = e.cluster.Client.CoreV1().Pods(e.ns).Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a privileged root pod in %s was not rejected by Pod Security: %v", e.ns, err)
	} else {
		t.Logf("rejected as it should be: %v", err)
	}
	pod := e.waitExporterRolledOut(ctx, t, 5*time.Minute)
	sc := pod.Spec.Containers[0].SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("exporter pod %s: security context %+v, want a read-only root and no privilege escalation", pod.Name, sc)
	}
}
