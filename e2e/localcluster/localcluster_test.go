package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// testIsolatedRuntimeClass is the tests' name for the isolated RuntimeClass: the control plane
// takes any name (the product's is the product's business).
const testIsolatedRuntimeClass = "localcluster-test-isolated"

func startCluster(t *testing.T, opts Options) *Cluster {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s=1: not starting the local control plane (this test proves nothing when skipped)", SkipEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	opts.Progress = testWriter{t}
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, c)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
	})
	return c
}

func TestLiveControlPlane(t *testing.T) {
	c := startCluster(t, Options{HPASyncPeriod: 5 * time.Second, IsolatedRuntimeClass: testIsolatedRuntimeClass})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	t.Run("a Deployment's pod is Ready on a simulated node", func(t *testing.T) {
		ns := newNamespace(t, c, "deploy")
		createDeployment(t, c, ns, "web", 1)
		waitUntil(t, ctx, "deployment web to have 1 ready replica", 60*time.Second, func(ctx context.Context) (bool, error) {
			d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return d.Status.ReadyReplicas == 1, nil
		})
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("listing the pod: %v (%d pods)", err, len(pods.Items))
		}
		node, err := c.Client.CoreV1().Nodes().Get(ctx, pods.Items[0].Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Annotations["kwok.x-k8s.io/node"] != "fake" {
			t.Fatalf("pod ran on node %s, which is not a simulated node", node.Name)
		}
		t.Logf("pod %s Ready on simulated node %s, pod IP %s", pods.Items[0].Name, node.Name, pods.Items[0].Status.PodIP)
	})

	t.Run("a warm pool of 2 is Ready, a claim adopts a warm sandbox and the pool replenishes", func(t *testing.T) {
		ns := newNamespace(t, c, "pool")
		createObject(t, c, gvr.SandboxTemplate, ns, addons.SandboxTemplate("tmpl", testIsolatedRuntimeClass))
		createObject(t, c, gvr.SandboxWarmPool, ns, addons.WarmPool("pool", "tmpl", 2))
		waitPoolReady(t, ctx, c, ns, "pool", 2)
		before := sandboxNames(t, c, ns)

		claim := map[string]any{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim",
			"metadata": map[string]any{"name": "claim-1"},
			"spec":     map[string]any{"warmPoolRef": map[string]any{"name": "pool"}},
		}
		createObject(t, c, gvr.SandboxClaim, ns, claim)
		var sandbox string
		waitUntil(t, ctx, "claim-1 to name its sandbox", 60*time.Second, func(ctx context.Context) (bool, error) {
			u, err := c.Dynamic.Resource(gvr.SandboxClaim).Namespace(ns).Get(ctx, "claim-1", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			sandbox, _, _ = unstructured.NestedString(u.Object, "status", "sandbox", "name")
			return sandbox != "", nil
		})
		if !before[sandbox] {
			t.Fatalf("claim-1 got sandbox %s, which was not one of the pool's warm sandboxes %v", sandbox, before)
		}
		sb, err := c.Dynamic.Resource(gvr.Sandbox).Namespace(ns).Get(ctx, sandbox, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if lt := sb.GetLabels()["agents.x-k8s.io/launch-type"]; lt != "warm" {
			t.Fatalf("sandbox %s has launch-type %q, want warm (labels %v)", sandbox, lt, sb.GetLabels())
		}
		// Replenished: the pool is back to 2 ready sandboxes that are not the claimed one.
		waitPoolReady(t, ctx, c, ns, "pool", 2)
		after := sandboxNames(t, c, ns)
		if len(after) != 3 {
			t.Fatalf("want 3 sandboxes (2 warm + 1 claimed), have %v", after)
		}
		t.Logf("claim-1 adopted warm sandbox %s; sandboxes now %v", sandbox, after)
	})

	t.Run("a ScaledObject on a local metrics-api server moves a Deployment up and back", func(t *testing.T) {
		ns := newNamespace(t, c, "keda")
		var demand atomic.Int64
		url := serveDemand(t, &demand)
		createDeployment(t, c, ns, "scaled", 1)
		so := map[string]any{
			"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
			"metadata": map[string]any{"name": "scaled"},
			"spec": map[string]any{
				"scaleTargetRef":  map[string]any{"name": "scaled"},
				"minReplicaCount": 1, "maxReplicaCount": 3, "pollingInterval": 2,
				"advanced": map[string]any{"horizontalPodAutoscalerConfig": map[string]any{"behavior": map[string]any{
					"scaleDown": map[string]any{"stabilizationWindowSeconds": 0},
				}}},
				"triggers": []any{map[string]any{
					"type": "metrics-api", "metricType": "AverageValue",
					"metadata": map[string]any{"url": url, "valueLocation": "value", "targetValue": "1"},
				}},
			},
		}
		createObject(t, c, gvr.ScaledObject, ns, so)
		waitUntil(t, ctx, "KEDA to create HPA keda-hpa-scaled", 60*time.Second, func(ctx context.Context) (bool, error) {
			_, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "keda-hpa-scaled", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
		for _, step := range []struct{ demand, want int32 }{{3, 3}, {0, 1}} {
			demand.Store(int64(step.demand))
			start := time.Now()
			waitUntil(t, ctx, fmt.Sprintf("spec.replicas=%d at demand %d", step.want, step.demand), 120*time.Second, func(ctx context.Context) (bool, error) {
				d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "scaled", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				return *d.Spec.Replicas == step.want, nil
			})
			t.Logf("demand %d -> spec.replicas %d after %s (HPA sync period %s)", step.demand, step.want, time.Since(start).Round(100*time.Millisecond), c.HPASyncPeriod)
		}
	})

	t.Run("a TokenRequest token is allowed and denied exactly as its Role says", func(t *testing.T) {
		ns := newNamespace(t, c, "rbac")
		if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		grantRole(t, c, ns, "reader", "reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}})
		exp := int64(3600)
		tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenRequest: %v", err)
		}
		cfg := rest.AnonymousClientConfig(c.Config)
		cfg.BearerToken = tr.Status.Token
		as, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := as.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("list configmaps in %s with the token: want allowed, got %v", ns, err)
		}
		for what, call := range map[string]func() error{
			"list secrets in " + ns:      func() error { _, err := as.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err },
			"list configmaps in default": func() error { _, err := as.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); return err },
			"delete a configmap in " + ns: func() error {
				return as.CoreV1().ConfigMaps(ns).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{})
			},
		} {
			if err := call(); !apierrors.IsForbidden(err) {
				t.Errorf("%s with the token: want Forbidden, got %v", what, err)
			}
		}
		user := "system:serviceaccount:" + ns + ":reader"
		for _, tc := range []struct {
			verb, resource, namespace string
			allowed                   bool
		}{
			{"list", "configmaps", ns, true}, {"get", "configmaps", ns, true},
			{"watch", "configmaps", ns, false}, {"list", "configmaps", "", false}, {"list", "secrets", ns, false},
		} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: tc.verb, Resource: tc.resource, Namespace: tc.namespace}}}
			got, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != tc.allowed {
				t.Errorf("SubjectAccessReview %s %s in %q: allowed=%v, want %v", tc.verb, tc.resource, tc.namespace, got.Status.Allowed, tc.allowed)
			}
		}
	})

	t.Run("the Pulumi CLI and the Kubernetes provider run", func(t *testing.T) {
		bins, err := toolcache.Ensure(ctx, testWriter{t}, toolcache.Pulumi...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, bins.Path("pulumi"), "version").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != contract.PulumiModule {
			t.Fatalf("pulumi version: %q, %v; want %s", out, err, contract.PulumiModule)
		}
		// A provider started by hand prints the port of its gRPC server, then serves until killed.
		cmd := exec.CommandContext(ctx, bins.Path("pulumi-resource-kubernetes"))
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		buf := make([]byte, 64)
		n, _ := stdout.Read(buf)
		port := strings.TrimSpace(string(buf[:n]))
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
		if err != nil {
			t.Fatalf("the provider printed %q and does not accept connections there: %v", port, err)
		}
		conn.Close()
	})
}

func newNamespace(t *testing.T, c *Cluster, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "the default ServiceAccount of "+ns.Name, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return ns.Name
}

// grantRole creates a Role of one rule and binds it to a ServiceAccount of ns, both named name.
func grantRole(t *testing.T, c *Cluster, ns, name, serviceAccount string, rule rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: serviceAccount, Namespace: ns}}}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createDeployment(t *testing.T, c *Cluster, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "public.ecr.aws/docker/library/busybox:1.36"}}},
			},
		},
	}
	if _, err := c.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createObject(t *testing.T, c *Cluster, gvr schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

func waitPoolReady(t *testing.T, ctx context.Context, c *Cluster, ns, name string, want int64) {
	t.Helper()
	waitUntil(t, ctx, fmt.Sprintf("pool %s to report readyReplicas=%d", name, want), 90*time.Second, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(gvr.SandboxWarmPool).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		return n == want, nil
	})
}

func sandboxNames(t *testing.T, c *Cluster, ns string) map[string]bool {
	t.Helper()
	l, err := c.Dynamic.Resource(gvr.Sandbox).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range l.Items {
		out[s.GetName()] = true
	}
	return out
}

// serveDemand is a metrics-api endpoint KEDA's operator (a local process) reads.
func serveDemand(t *testing.T, demand *atomic.Int64) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]int64{"value": demand.Load()})
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/"
}

// waitUntil is poll.Until for a test: a read error is retried (it is not a value), and the last
// one is reported with the number of reads if the wait times out.
func waitUntil(t *testing.T, ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := poll.Until(ctx, timeout, 250*time.Millisecond, cond); err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func dumpLogs(t *testing.T, c *Cluster) {
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kwok", "agent-sandbox-controller", "keda-operator", "keda-adapter", "karpenter"} {
		b, err := os.ReadFile(c.Log(name))
		if err != nil {
			continue
		}
		t.Logf("=== last lines of %s ===\n%s", name, process.Tail(string(b), 3000))
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
