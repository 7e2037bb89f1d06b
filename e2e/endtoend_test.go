package e2e

// The end-to-end test: the product run exactly as a user runs it, against one local control
// plane (real kube-apiserver, controller-manager with the HPA, KEDA, agent-sandbox, cluster DNS,
// and a real node: kubelet, containerd, gVisor), with the real Pulumi CLI and Kubernetes
// provider running the program (awsprogram.Run) inline. Several stacks share the control plane:
// what does not take a shared part down runs side by side, the faults run alone after it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// step is one named step of a run; runSteps stops at the first that fails.
type step struct {
	name string
	run  func(context.Context, *testing.T)
}

// runSteps runs each step as a subtest of t and stops after the first that fails: what a later
// step would show depends on the earlier ones.
func runSteps(ctx context.Context, t *testing.T, steps []step) {
	t.Helper()
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(ctx, t) }) {
			t.Fatalf("stopping after %q failed", s.name)
		}
	}
}

// sideBySide runs the steps as subtests of t, at most n at a time: the first n start at once,
// and each later one, in order, as soon as one running ends; it returns when all have ended.
// (Goroutines, not t.Parallel: the steps overlap whatever -parallel says.)
func sideBySide(ctx context.Context, t *testing.T, n int, steps []step) {
	t.Helper()
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, s := range steps {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			t.Run(s.name, func(t *testing.T) { s.run(ctx, t) })
		}()
	}
	wg.Wait()
}

// stacksAtOnce is how many of TestLiveRealNodeEndToEnd's stacks run at a time on its one real
// node: with six at once, exec into a gVisor sandbox timed out in containerd ("failed to load
// task: context deadline exceeded"); with four, it did too while all four started together, and
// has not since the package's consumers wait for the deployed stack's up (below).
const stacksAtOnce = 4

// Namespaces of the stacks that share TestLiveRealNodeEndToEnd's control plane; the deployed stack keeps the
// program's default, as a user's first stack does.
const (
	poolsNamespace          = "e2e-pools"
	exporterFaultsNamespace = "e2e-exporter-faults"
)

func TestLiveRealNodeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Minute)
	defer cancel()
	work := t.TempDir()
	c := startCluster(t, ctx, work, localcluster.Options{RealNodes: 1, SkipWarmPoolCheck: true}, realNodeHint)
	verifyBin := goBuild(t, work, framework.Module+"/verify")
	// The package's plugin, once for both of its consumers.
	plugin := packagePlugin(t, work)
	// One prebuilt exporter image (ko-style, no Docker) for every stack that runs the image path,
	// imported into the node once under the reference their config names.
	archive, err := framework.BuildExporterImage(ctx, framework.NewLogWriter(t), work, exporterImageRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	// The registry the two-pool stack publishes the exporter's image to, and the docker config
	// whose credentials its up pushes with (the program runs in this process).
	reg := framework.StartRegistry(t)
	t.Setenv("DOCKER_CONFIG", reg.DockerConfig)
	adopted := snapshotSharedInstalls(t, ctx, c)
	deployed := newDeployedEnv(t, ctx, c, filepath.Join(work, "deployed"), "deployed", nil)

	// The package's consumers start once the deployed stack is up: until then its exporter
	// compiles on the node while every pool boots, and a consumer's verify among that load found
	// no warm sandbox within its minute, then timed out exec'ing into gVisor.
	deployedSteps, deployedUp := deployed.deployedSteps(verifyBin), make(chan struct{})
	up := deployedSteps[0].run
	deployedSteps[0].run = func(ctx context.Context, t *testing.T) {
		defer close(deployedUp)
		up(ctx, t)
	}
	afterDeployedUp := func(ctx context.Context, t *testing.T) {
		select {
		case <-deployedUp:
		case <-ctx.Done():
			t.Fatalf("waiting for the deployed stack's up: %v", ctx.Err())
		}
	}

	runSteps(ctx, t, []step{
		// Side by side: none of these takes a part of the control plane down, and each stack has
		// its namespaces; the real node has room for all of them (the pools' requests are small).
		// The three longest and the YAML consumer first (it waits for the deployed stack's up);
		// the Go consumer as the first of them ends. (Bad input and the stack with a local
		// exporter need no real node: TestLiveSimulatedNodeEndToEnd.)
		{"side by side, four at a time: the deployed stack, a two-pool stack, the exporter's faults, then the package from a team's YAML and Go stacks", func(ctx context.Context, t *testing.T) {
			sideBySide(ctx, t, stacksAtOnce, []step{
				{"the deployed stack", func(ctx context.Context, t *testing.T) {
					runSteps(ctx, t, deployedSteps)
				}},
				{"two pools", func(ctx context.Context, t *testing.T) {
					pools := newDeployedEnv(t, ctx, c, filepath.Join(work, "pools"), "pools",
						map[string]string{"namespace": poolsNamespace, "exporterImageRepository": reg.Host + "/" + poolsNamespace + "/claim-exporter"})
					runSteps(ctx, t, pools.poolSteps(verifyBin, reg))
				}},
				{"the exporter's faults", func(ctx context.Context, t *testing.T) {
					faults := newDeployedEnv(t, ctx, c, filepath.Join(work, "exporter-faults"), "exporter-faults",
						map[string]string{"namespace": exporterFaultsNamespace, "exporterImage": exporterImageRef})
					runSteps(ctx, t, faults.exporterFaultSteps(verifyBin))
				}},
				{"the package from a team's YAML stack", func(ctx context.Context, t *testing.T) {
					afterDeployedUp(ctx, t)
					runSteps(ctx, t, newYAMLConsumer(ctx, t, c, filepath.Join(work, "yaml-consumer"), plugin).steps(verifyBin, adopted))
				}},
				{"the package from a team's Go stack", func(ctx context.Context, t *testing.T) {
					afterDeployedUp(ctx, t)
					runSteps(ctx, t, newGoConsumer(ctx, t, c, filepath.Join(work, "go-consumer"), plugin).goConsumerSteps(verifyBin, adopted))
				}},
			})
		}},
		// The loop's controllers go down in TestLiveSimulatedNodeEndToEnd, on simulated nodes
		// beside this lane (faults_test.go says why).
		{"faults: the real node's kubelet, the API server and etcd down under the deployed stack while claims are held", func(ctx context.Context, t *testing.T) {
			deployed.processFaults(ctx, t, "the real node's kubelet, the API server and etcd", realNodeFaults)
		}},
		{"pulumi destroy of the deployed stack leaves none of its namespaces", deployed.destroyLeavesNothing},
	})
}

// localExporterSteps run on the stack whose exporter is a local process: up, the exporter with a
// TokenRequest token, the demo's closing commands, up under load, the exporter's faults, destroy
// (shared installs untouched) and the demo's teardown command (in order).
func (e *env) localExporterSteps(adopted sharedInstall) []step {
	return []step{
		{"pulumi up creates the stack and its outputs are what verify reads", func(ctx context.Context, t *testing.T) { e.up(ctx, t) }},
		{"the exporter runs with a TokenRequest token of its ServiceAccount", func(ctx context.Context, t *testing.T) { e.startExporterWithToken(ctx, t) }},
		{"the demo's closing commands run as printed (kubectl from the tool cache, verify's demand phase)", e.demoExploreCommands},
		{"pulumi up under load leaves spec.replicas to the HPA", e.upUnderLoad},
		{"faults: exporter stopped, API unreachable at restart, token rotated", e.faults},
		{"pulumi destroy removes everything in order and leaves shared installs alone", func(ctx context.Context, t *testing.T) { e.destroy(ctx, t, adopted) }},
		{"the demo's teardown command, run as printed, stops the control plane and removes its state", e.demoTeardownCommand},
	}
}

// checkScaleSteps holds verify's report of a one-pool "all" run to the demand it drove: scale-up
// steps at 0..3 claims each reaching what was expected with a latency, a scale-down ending at 0
// claims, and a control window with readings.
func checkScaleSteps(t *testing.T, rep *report.Report) {
	t.Helper()
	checkDemandSteps(t, rep)
	if rep.Control == nil || rep.Control.Readings == 0 || rep.Control.WindowSeconds <= 0 {
		t.Errorf("no control window in the report: %+v", rep.Control)
	}
}

// checkDemandSteps holds a one-pool run's demand phase to the demand it drove: scale-up steps
// at 0..3 claims each reaching what was expected with a latency, a scale-down ending at 0.
func checkDemandSteps(t *testing.T, rep *report.Report) {
	t.Helper()
	wantUp := []int{0, 1, 2, 3}
	var gotUp []int
	for _, s := range rep.ScaleUp {
		gotUp = append(gotUp, s.Claims)
		if s.SpecReplicas == nil || *s.SpecReplicas != s.Expected || s.LatencySeconds == nil {
			t.Errorf("scale-up step at %d claims: spec.replicas %v, expected %d, latency %v", s.Claims, s.SpecReplicas, s.Expected, s.LatencySeconds)
		}
	}
	if fmt.Sprint(gotUp) != fmt.Sprint(wantUp) {
		t.Errorf("scale-up steps drove claims %v, want %v", gotUp, wantUp)
	}
	if len(rep.ScaleDown) == 0 || rep.ScaleDown[len(rep.ScaleDown)-1].Claims != 0 {
		t.Errorf("scale-down did not end at 0 claims: %+v", rep.ScaleDown)
	}
}

// upUnderLoad re-runs up (without and with --refresh) while the HPA holds
// the pool above its floor: the pool must stay there.
func (e *env) upUnderLoad(ctx context.Context, t *testing.T) {
	claims := []string{"load-1", "load-2", "load-3"}
	for _, n := range claims {
		e.createClaim(ctx, t, n)
	}
	defer e.deleteClaims(ctx, t, claims)
	e.waitSpecReplicas(ctx, t, 3, 2*time.Minute)
	prev, err := e.stack.Preview(ctx)
	if err != nil {
		t.Fatalf("preview under load: %v", err)
	}
	for op, n := range prev.ChangeSummary {
		if op != "same" && op != "read" && n > 0 { // reads are the adopt-mode checks of shared installs
			t.Errorf("preview under load plans %d %q: want no change (%v)", n, op, prev.ChangeSummary)
		}
	}
	for _, refresh := range []bool{false, true} {
		opts := []optup.Option{optup.ProgressStreams(framework.NewLogWriter(t))}
		if refresh {
			opts = append(opts, optup.Refresh())
		}
		res, err := e.stack.Up(ctx, opts...)
		if err != nil {
			t.Fatalf("pulumi up (refresh=%v) under load: %v", refresh, err)
		}
		t.Logf("up (refresh=%v) under load: %v", refresh, res.Summary.ResourceChanges)
		n, err := e.specReplicas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("after pulumi up (refresh=%v) under load spec.replicas=%d, want 3 (the HPA's)", refresh, n)
		}
	}
	e.consistently(ctx, t, "spec.replicas stays 3 after the re-runs", 2*e.cluster.HPASyncPeriod, func(n int64) bool { return n == 3 })
}

func (e *env) faults(ctx context.Context, t *testing.T) {
	claims := []string{"fault-1", "fault-2", "fault-3"}
	for _, n := range claims {
		e.createClaim(ctx, t, n)
	}
	defer e.deleteClaims(ctx, t, claims)
	e.waitSpecReplicas(ctx, t, 3, 2*time.Minute)
	e.waitDemand(ctx, t, 3, true, time.Minute)

	// As long as the deployed stack's exporter outage: KEDA's fallback may answer only after 3
	// HPA syncs' failed reads, and one more sync must read it.
	outage := exporterDownFor(e.cluster.HPASyncPeriod)
	t.Run("exporter stopped: the pool does not shrink", func(t *testing.T) {
		e.stopExporter()
		e.consistently(ctx, t, "spec.replicas holds 3 with the exporter down", outage, func(n int64) bool { return n >= 3 })
		e.startExporter(t)
		e.waitDemand(ctx, t, 3, true, time.Minute)
	})
	t.Run("exporter restarted while the API is unreachable: no count, never 0", func(t *testing.T) {
		e.apiProxy.Cut()
		e.stopExporter()
		e.startExporter(t)
		framework.Consistently(t, ctx, "with no successful read yet the exporter serves no count, and /healthz answers 200 (it must not depend on the API)", 15*time.Second,
			func(context.Context) (bool, string, error) {
				code, body := framework.HTTPGet(e.demandURL())
				health, _ := framework.HTTPGet(e.exporter.HealthzURL())
				ok := code != http.StatusOK && !strings.Contains(body, contract.DemandField) && health == http.StatusOK
				return ok, fmt.Sprintf("/demand %d %q, /healthz %d", code, body, health), nil
			})
		e.consistently(ctx, t, "spec.replicas holds 3 while the exporter has no count", outage, func(n int64) bool { return n >= 3 })
		e.apiProxy.Restore()
		e.waitDemand(ctx, t, 3, true, time.Minute)
	})
	t.Run("token file rotated: the new token is used, the old one is revoked", func(t *testing.T) {
		writeFileAtomic(t, e.exporter.TokenFile, e.boundToken(ctx, t, "exporter-token-2"))
		// Revoke the first token by deleting the object it is bound to.
		if err := e.cluster.Client.CoreV1().Secrets(e.ns).Delete(ctx, "exporter-token-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, ctx, "the API server to reject the first token", 30*time.Second, func(ctx context.Context) (bool, error) {
			return e.tokenRejected(e.firstToken), nil
		})
		before := time.Now()
		framework.Eventually(t, ctx, "a fresh read after the rotation", 30*time.Second, func(ctx context.Context) (bool, error) {
			d, err := framework.Demand(e.demandURL())
			if err != nil || !d.Fresh {
				return false, err
			}
			at, _ := time.Parse(time.RFC3339Nano, d.ReadAt)
			return at.After(before.Add(-time.Second)) && d.ActiveClaims == 3, nil
		})
	})
}

// badInput runs preview and up of stacks whose config breaks one rule each (on top of base, a
// valid config): both must fail naming the key, and nothing may be created.
func badInput(ctx context.Context, t *testing.T, c *localcluster.Cluster, work string, base map[string]string) {
	cases := []struct {
		name    string
		change  map[string]string
		message string
	}{
		{"min above max", map[string]string{"minReplicas": "4", "maxReplicas": "3"}, "minReplicas"},
		{"negative bound", map[string]string{"minReplicas": "-1"}, "minReplicas"},
		{"load cap above max", map[string]string{"loadCap": "5"}, "loadCap"},
		{"unknown cluster mode", map[string]string{"clusterMode": "borrow"}, "clusterMode"},
		{"unknown KEDA mode", map[string]string{"kedaMode": "upgrade"}, "kedaMode"},
		{"empty kubeconfig in existing mode", map[string]string{"kubeconfig": ""}, "kubeconfig"},
		{"invalid namespace name", map[string]string{"namespace": "Bad_Name"}, "namespace"},
		{"non-numeric target", map[string]string{"targetValue": "one"}, "targetValue"},
		{"old Kubernetes for a new cluster", map[string]string{"clusterMode": "create", "kubernetesVersion": "1.31"}, "kubernetesVersion"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]string{}
			for k, v := range base {
				cfg[k] = v
			}
			// A namespace of its own, so anything created would be found.
			cfg["namespace"] = fmt.Sprintf("bad-input-%d", i)
			for k, v := range tc.change {
				cfg[k] = v
			}
			st, err := framework.NewStack(ctx, filepath.Join(work, "pulumi"), fmt.Sprintf("bad-%d", i), cfg, framework.NewLogWriter(t))
			if err != nil {
				t.Fatal(err)
			}
			_, perr := st.Preview(ctx, optpreview.ProgressStreams(framework.NewLogWriter(t)))
			_, uerr := st.Up(ctx)
			for what, err := range map[string]error{"preview": perr, "up": uerr} {
				if err == nil {
					t.Errorf("%s succeeded with %v", what, tc.change)
				} else if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("%s failed without naming %q: %v", what, tc.message, lastLines(err.Error(), 8))
				}
			}
			dep, err := st.Export(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var state struct{ Resources []struct{ Type string } }
			_ = json.Unmarshal(dep.Deployment, &state)
			for _, r := range state.Resources {
				if r.Type != "pulumi:pulumi:Stack" && !strings.HasPrefix(r.Type, "pulumi:providers:") {
					t.Errorf("the failed up left resource %s in the stack", r.Type)
				}
			}
			if name := cfg["namespace"]; name != "Bad_Name" {
				if _, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("namespace %s exists after a failed up (err %v)", name, err)
				}
			}
			_ = st.Workspace().RemoveStack(ctx, st.Name())
		})
	}
}

// sharedInstall is what must be identical before and after destroy.
type sharedInstall map[string]string

func snapshotSharedInstalls(t testing.TB, ctx context.Context, c *localcluster.Cluster) sharedInstall {
	s := sharedInstall{}
	crds, err := c.Dynamic.Resource(localcluster.CRDGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		g, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		if strings.HasSuffix(g, contract.AgentSandboxGroup) || strings.HasSuffix(g, contract.KedaGroup) {
			s["crd/"+crd.GetName()] = string(crd.GetUID()) + "@" + crd.GetResourceVersion()
		}
	}
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, contract.KedaNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s["namespace/"+contract.KedaNamespace] = string(ns.UID)
	rc, err := c.Client.NodeV1().RuntimeClasses().Get(ctx, contract.RuntimeClassName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s["runtimeclass/"+rc.Name] = string(rc.UID) + "@" + rc.ResourceVersion
	return s
}

func (e *env) destroy(ctx context.Context, t *testing.T, before sharedInstall) {
	evs := make(chan events.EngineEvent)
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range evs {
			if o := ev.ResOutputsEvent; o != nil && o.Metadata.Op == "delete" {
				order = append(order, o.Metadata.Type+"::"+urnName(o.Metadata.URN))
			}
		}
	}()
	if _, err := e.stack.Destroy(ctx, optdestroy.ProgressStreams(framework.NewLogWriter(t)), optdestroy.EventStreams(evs)); err != nil {
		t.Fatalf("pulumi destroy: %v", err)
	}
	<-done
	t.Logf("delete order: %v", order)
	pos := func(substr string) int {
		for i, o := range order {
			if strings.Contains(o, substr) {
				return i
			}
		}
		t.Errorf("nothing matching %q was deleted", substr)
		return -1
	}
	so, dep, pool, tmpl, ns := pos(contract.ScaledObjectKind), pos("apps/v1:Deployment"), pos(contract.SandboxWarmPoolKind), pos(contract.SandboxTemplateKind), pos("core/v1:Namespace")
	if !(so < dep && pool < tmpl && tmpl < ns && dep < ns) {
		t.Errorf("unsafe delete order: ScaledObject %d, exporter Deployment %d, pool %d, template %d, namespace %d", so, dep, pool, tmpl, ns)
	}
	namespaceGone(ctx, t, e.cluster, e.ns)
	sharedInstallsAlone(ctx, t, e.cluster, before)
}

// namespaceGone waits for a destroyed stack's namespace to be deleted.
func namespaceGone(ctx context.Context, t *testing.T, c *localcluster.Cluster, ns string) {
	framework.Eventually(t, ctx, "namespace "+ns+" to be gone", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// sharedInstallsAlone holds the adopted installs after a stack's destroy to what they were
// before: the same CRDs and KEDA namespace, their controllers running, KEDA's APIService Available.
func sharedInstallsAlone(ctx context.Context, t *testing.T, c *localcluster.Cluster, before sharedInstall) {
	after := snapshotSharedInstalls(t, ctx, c)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("shared install %s changed: %s -> %s", k, v, after[k])
		}
	}
	if ok, dead := c.Running(); !ok {
		t.Errorf("shared controllers stopped: %v", dead)
	}
	a, err := c.Dynamic.Resource(localcluster.APIServiceGVR).Get(ctx, "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
	if err != nil || !localcluster.ConditionTrue(a, "Available") {
		t.Errorf("KEDA's APIService is not Available after destroy (%v)", err)
	}
}

func urnName(urn string) string {
	if i := strings.LastIndex(urn, "::"); i >= 0 {
		return urn[i+2:]
	}
	return urn
}
