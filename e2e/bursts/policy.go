package bursts

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/components/mockgraph"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/exporter"
	"github.com/warmpool/warm-pool-autoscaling-keda/program"
)

// Policy is one way of sizing the warm pool. Every policy gets its own
// namespace and pool, rendered by the program's own components.
type Policy struct {
	Name string
	// Fixed > 0 is a pool of that size with no autoscaler.
	Fixed int
	// Config holds the program's config keys (as in Pulumi.yaml) this policy
	// sets on top of the shared ones; an autoscaled policy gets the
	// ScaledObject the program renders from them.
	Config map[string]string
	// How says in a few words what the policy does, for the table.
	How string
}

// Autoscaled reports whether the policy runs a ScaledObject.
func (p Policy) Autoscaled() bool { return p.Fixed == 0 }

// Namespace is the policy's namespace.
func (p Policy) Namespace() string { return "bursts-" + p.Name }

// Policies are the ones the benchmark compares: fixed pools at the floor, at
// a size that covers a burst and its successor, and at the maximum; the
// ScaledObject as the program deploys it by default; and the headroom policy
// at three settings. floor and maxReplicas bound every autoscaled pool.
func Policies(floor, maxReplicas int) []Policy {
	return []Policy{
		{Name: "fixed-floor", Fixed: floor, How: fmt.Sprintf("fixed pool of %d (the floor)", floor)},
		{Name: "fixed-10", Fixed: 10, How: "fixed pool of 10 (for comparison)"},
		{Name: "fixed-max", Fixed: maxReplicas, How: fmt.Sprintf("fixed pool of %d (the maximum)", maxReplicas)},
		{Name: "blueprint", Config: map[string]string{}, How: "ScaledObject as deployed: ceil(claims/1)"},
		{Name: "headroom-3", Config: map[string]string{"headroom": "3"}, How: "headroom 3: ceil(claims/1)+3"},
		{Name: "headroom-5", Config: map[string]string{"headroom": "5"}, How: "headroom 5: ceil(claims/1)+5"},
		{Name: "headroom-6", Config: map[string]string{"headroom": "6"}, How: "headroom 6: ceil(claims/1)+6"},
	}
}

// Objects are what one policy's namespace holds before the trace starts, in
// the order they are created.
type Objects struct {
	Items []*unstructured.Unstructured
	// GVRs[i] is the resource of Items[i].
	GVRs []schema.GroupVersionResource
}

// kinds maps the program's resource types to what the benchmark creates, in
// creation order. The exporter's Deployment, Service and ConfigMap are left
// out: the exporter runs as a local process, as in the end-to-end test.
var kinds = []struct {
	typ string
	gvr schema.GroupVersionResource
}{
	{"kubernetes:core/v1:Namespace", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
	{"kubernetes:core/v1:ServiceAccount", schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}},
	{"kubernetes:rbac.authorization.k8s.io/v1:Role", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}},
	{"kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}},
	{"kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxTemplate", schema.GroupVersionResource{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxtemplates"}},
	{"kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxWarmPool", schema.GroupVersionResource{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxwarmpools"}},
	{"kubernetes:keda.sh/v1alpha1:ScaledObject", schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}},
}

// Render runs the program's components under Pulumi mocks with the
// program's own config loading (defaults and validation included), wired as
// program.Run wires them, and
// returns the objects they declare for policy p: the namespace, template and
// pool; for an autoscaled policy also the exporter's ServiceAccount, Role and
// RoleBinding and the ScaledObject. shared holds the config keys every
// policy has (kubeconfig, bounds); exporterURL is where KEDA reads demand.
func Render(p Policy, shared map[string]string, exporterURL string) (*Objects, error) {
	cfg := map[string]string{}
	for k, v := range shared {
		cfg[k] = v
	}
	for k, v := range p.Config {
		cfg[k] = v
	}
	cfg["namespace"] = p.Namespace()
	if p.Fixed > 0 {
		// The pool starts at minReplicas: a fixed pool is one whose floor is its size.
		cfg["minReplicas"], cfg["maxReplicas"] = strconv.Itoa(p.Fixed), strconv.Itoa(max(p.Fixed, atoiOr(cfg["maxReplicas"], 1)))
	}
	if exporterURL != "" {
		cfg["exporterUrl"] = exporterURL
	}
	full := map[string]string{}
	for k, v := range cfg {
		full[contract.ProjectName+":"+k] = v
	}
	b, err := json.Marshal(full)
	if err != nil {
		return nil, err
	}
	// The mocks read the config from the environment, as the Pulumi engine passes it.
	old, had := os.LookupEnv("PULUMI_CONFIG")
	os.Setenv("PULUMI_CONFIG", string(b))
	defer func() {
		if had {
			os.Setenv("PULUMI_CONFIG", old)
		} else {
			os.Unsetenv("PULUMI_CONFIG")
		}
	}()
	rec := mockgraph.New()
	err = pulumi.RunErr(func(ctx *pulumi.Context) error {
		c, err := program.LoadConfig(ctx)
		if err != nil {
			return err
		}
		pool, err := components.NewWarmPool(ctx, "warm-pool", &components.WarmPoolArgs{
			Namespace: c.Namespace, StackLabelValue: c.StackLabelValue(), TemplateName: c.TemplateName,
			PoolName: c.PoolName, InitialReplicas: c.MinReplicas, RuntimeClassName: contract.RuntimeClassName,
		})
		if err != nil || p.Fixed > 0 {
			return err
		}
		src, err := exporter.PodSource()
		if err != nil {
			return err
		}
		if _, err := components.NewClaimExporter(ctx, "claim-exporter", &components.ClaimExporterArgs{
			Namespace: pool.NamespaceName, Selector: c.ClaimSelector, Source: src,
		}); err != nil {
			return err
		}
		_, err = components.NewAutoscaler(ctx, "autoscaler", &components.AutoscalerArgs{
			Namespace: pool.NamespaceName, Name: contract.ScaledObjectName, PoolName: c.PoolName,
			MinReplicas: c.MinReplicas, MaxReplicas: c.MaxReplicas, TargetValue: c.TargetValue,
			ActivationTargetValue: c.ActivationTargetValue, PollingInterval: c.PollingInterval,
			URL: pulumi.String(c.ExporterURL), FallbackReplicas: c.FallbackReplicas, Headroom: c.Headroom,
		})
		return err
	}, rec.Options(contract.ProjectName, "bursts"))
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	objs := &Objects{}
	for _, k := range kinds {
		found := rec.Find(k.typ, "")
		sort.SliceStable(found, func(i, j int) bool { return found[i].Name < found[j].Name })
		for _, r := range found {
			obj, ok := resource.NewProperty(r.Inputs).Mappable().(map[string]any)
			if !ok {
				return nil, fmt.Errorf("policy %s: %s %s has no object inputs", p.Name, r.Type, r.Name)
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetAPIVersion(k.gvr.GroupVersion().String())
			objs.Items = append(objs.Items, u)
			objs.GVRs = append(objs.GVRs, k.gvr)
		}
	}
	return objs, nil
}

// Find returns the first object of a resource, or nil.
func (o *Objects) Find(resource string) *unstructured.Unstructured {
	for i, g := range o.GVRs {
		if g.Resource == resource {
			return o.Items[i]
		}
	}
	return nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
