// Package bursts measures, on the local control plane, what a warm pool buys under bursty
// demand: the pool policies compared side by side (this file), the benchmark that replays a
// trace (package replay) against every policy at once (bursts_test.go), and the replay model
// held against those runs and against Karpenter's nodes.
package bursts

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"warmpool.local/warm-pool-autoscaling-keda/awsprogram"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// Policy is one way of sizing the warm pool. Every policy gets its own
// namespace and pool, rendered by the program itself (Render).
type Policy struct {
	Name string
	// Trace names the trace the policy is measured on ("" for none): one
	// run replays both traces, each against namespaces of its own.
	Trace string
	// Fixed > 0 is a pool of that size with no autoscaler.
	Fixed int
	// Config holds the program's config keys (as in Pulumi.yaml) this policy
	// sets on top of the shared ones; an autoscaled policy gets the
	// ScaledObject the program renders from them.
	Config map[string]string
	// How says in a few words what the policy does, for the table.
	How string
	// ArrivalWindows are the exporter's arrival windows (short, long) in
	// seconds, for a policy sized by arrivals; nil for the others.
	ArrivalWindows []int
}

// Autoscaled reports whether the policy runs a ScaledObject.
func (p Policy) Autoscaled() bool { return p.Fixed == 0 }

// UsesArrivals reports whether the policy is sized by arrivals: its
// ScaledObject reads the exporter's arrival counts.
func (p Policy) UsesArrivals() bool { return len(p.ArrivalWindows) == 2 }

// Namespace is the policy's namespace.
func (p Policy) Namespace() string {
	if p.Trace == "" {
		return "bursts-" + p.Name
	}
	return "bursts-" + p.Trace + "-" + p.Name
}

// ArrivalsSizing is the `arrivals` sizing policy's config (the contract's
// `sizing` object): parameters a platform team knows rather than tuned
// constants.
type ArrivalsSizing struct {
	BootSeconds        int    // the sandbox's cold start, rounded up
	HPASyncSeconds     int    // the HPA controller's sync period
	WarmHitTarget      string // the warm-hit share wanted, e.g. "0.99"
	ShortWindowSeconds int
	LongWindowSeconds  int
}

// DefaultArrivalsSizing is the benchmark's arrivals policy: the simulated
// boot (at most 6 s), EKS's HPA sync (15 s), 99% warm hits, and the arrival
// windows of the contract's example (30 s and 180 s).
func DefaultArrivalsSizing() ArrivalsSizing {
	return ArrivalsSizing{BootSeconds: 6, HPASyncSeconds: 15, WarmHitTarget: "0.99", ShortWindowSeconds: 30, LongWindowSeconds: 180}
}

// SizingKey is the program's config key of the sizing policy, an object
// (`pulumi config set --path sizing.policy arrivals`).
const SizingKey = "sizing"

// Config is the policy's program config: the `sizing` object as Pulumi
// passes structured config to a program, a JSON string.
func (a ArrivalsSizing) Config() map[string]string {
	b, _ := json.Marshal(map[string]any{
		"policy": "arrivals", "bootSeconds": a.BootSeconds, "hpaSyncSeconds": a.HPASyncSeconds,
		"warmHitTarget": json.Number(a.WarmHitTarget), "shortWindowSeconds": a.ShortWindowSeconds, "longWindowSeconds": a.LongWindowSeconds,
	})
	return map[string]string{SizingKey: string(b)}
}

// FixedSweep is the fixed pool sizes measured on a trace whose pools are
// bounded by maxReplicas: dense where warm hits climb from most claims to
// all of them, sparse above, and the maximum itself, so the fixed pools draw
// the frontier every other policy is judged against.
func FixedSweep(maxReplicas int) []int {
	var out []int
	for _, n := range []int{1, 2, 4, 6, 8, 10, 12, 15, 20} {
		if n < maxReplicas {
			out = append(out, n)
		}
	}
	return append(out, maxReplicas)
}

// ParseSizes reads a comma-separated list of fixed pool sizes (BURSTS_FIXED),
// each in [1, maxReplicas], in increasing order.
func ParseSizes(s string, maxReplicas int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxReplicas {
			return nil, fmt.Errorf("fixed pool size %q: want a whole number in [1, %d]", f, maxReplicas)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("fixed pool sizes %q: list them once each, in increasing order", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// Policies are the ones the benchmark compares on one trace: fixed pools of
// each size (the frontier); the ScaledObject as the program deploys it by
// default; the headroom policy at three settings; scale-to-zero (the
// blueprint's mapping with a floor of 0 and KEDA's activation); and, when
// withArrivals, the arrivals policy. floor and maxReplicas bound every
// autoscaled pool.
func Policies(trace string, floor, maxReplicas int, sizes []int, withArrivals bool) []Policy {
	var ps []Policy
	for _, n := range sizes {
		how := fmt.Sprintf("fixed pool of %d", n)
		switch n {
		case floor:
			how += " (the floor)"
		case maxReplicas:
			how += " (the maximum)"
		}
		ps = append(ps, Policy{Name: fmt.Sprintf("fixed-%d", n), Fixed: n, How: how})
	}
	ps = append(ps,
		Policy{Name: "blueprint", Config: map[string]string{}, How: "ScaledObject as deployed: ceil(claims/1)"},
		Policy{Name: "headroom-3", Config: map[string]string{"headroom": "3"}, How: "headroom 3: ceil(claims/1)+3"},
		Policy{Name: "headroom-5", Config: map[string]string{"headroom": "5"}, How: "headroom 5: ceil(claims/1)+5"},
		Policy{Name: "headroom-6", Config: map[string]string{"headroom": "6"}, How: "headroom 6: ceil(claims/1)+6"},
		Policy{Name: "zero", Config: map[string]string{"minReplicas": "0", "activationTargetValue": "0"},
			How: "scale to zero: ceil(claims/1), floor 0, activation above 0 claims"},
	)
	if withArrivals {
		a := DefaultArrivalsSizing()
		ps = append(ps, Policy{Name: "arrivals", Config: a.Config(), ArrivalWindows: []int{a.ShortWindowSeconds, a.LongWindowSeconds},
			How: fmt.Sprintf("arrivals: Poisson quantile at %s of the arrivals over a refill (windows %d s, %d s)", a.WarmHitTarget, a.ShortWindowSeconds, a.LongWindowSeconds)})
	}
	for i := range ps {
		ps[i].Trace = trace
	}
	return ps
}

// Objects are what one policy's namespace holds before the trace starts, in
// the order they are created.
type Objects struct {
	Items []*unstructured.Unstructured
	// GVRs[i] is the resource of Items[i].
	GVRs []schema.GroupVersionResource
	// ExporterEnv is the environment the program gives the exporter's
	// container (EXPORTER_SELECTOR, EXPORTER_POOLS, ...), for the local
	// exporter process that stands in for its Deployment.
	ExporterEnv map[string]string
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
	{"kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxTemplate", gvr.SandboxTemplate},
	{"kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxWarmPool", gvr.SandboxWarmPool},
	{"kubernetes:keda.sh/v1alpha1:ScaledObject", gvr.ScaledObject},
}

// autoscalerOnly are the kinds a fixed pool leaves out: it has no exporter
// and no ScaledObject.
var autoscalerOnly = map[string]bool{
	"serviceaccounts": true, "roles": true, "rolebindings": true, "scaledobjects": true,
}

// ErrArrivalsNotRendered says the program ignored the arrivals sizing: its
// ScaledObject reads no arrival count. The program of the day does not
// understand the `sizing` keys yet; the benchmark then leaves the policy out.
var ErrArrivalsNotRendered = errors.New("the program rendered no ScaledObject reading the arrival counts: it does not understand the sizing keys yet")

// Arrival fields of the exporter's answer (the contract's
// DemandArrivalsShortField and DemandArrivalsLongField).
const (
	arrivalsShortField = "arrivals_short"
	arrivalsLongField  = "arrivals_long"
)

// Render runs the program itself (awsprogram.Run) under Pulumi mocks, with its
// own config loading, defaults and validation, and returns the objects it
// declares for policy p that the benchmark creates: the namespace, template
// and pool; for an autoscaled policy also the exporter's ServiceAccount,
// Role and RoleBinding and the ScaledObject, and the exporter's environment.
// shared holds the config keys every policy has (kubeconfig, bounds);
// exporterURL is where KEDA reads demand. A policy sized by arrivals whose
// ScaledObject reads no arrival count fails with ErrArrivalsNotRendered.
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
	rec := mockgraph.New()
	if err := pulumi.RunErr(awsprogram.Run, rec.Options(contract.ProjectName, "bursts"), mockgraph.WithConfig(full)); err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	objs := &Objects{ExporterEnv: map[string]string{}}
	for _, k := range kinds {
		if p.Fixed > 0 && autoscalerOnly[k.gvr.Resource] {
			continue
		}
		found := rec.Find(k.typ, "")
		sort.SliceStable(found, func(i, j int) bool { return found[i].Name < found[j].Name })
		for _, r := range found {
			if r.Read {
				continue // read from the cluster, not declared by the stack
			}
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
	for _, d := range rec.Find("kubernetes:apps/v1:Deployment", "") {
		if d.Name != contract.ExporterName {
			continue
		}
		obj, _ := resource.NewProperty(d.Inputs).Mappable().(map[string]any)
		containers, _ := nested(obj, "spec", "template", "spec", "containers").([]any)
		for _, c := range containers {
			env, _ := nested(asMap(c), "env").([]any)
			for _, e := range env {
				m := asMap(e)
				if name, ok := m["name"].(string); ok {
					v, _ := m["value"].(string)
					objs.ExporterEnv[name] = v
				}
			}
		}
	}
	if p.UsesArrivals() && !ReadsArrivals(objs.Find("scaledobjects")) {
		return nil, fmt.Errorf("policy %s: %w", p.Name, ErrArrivalsNotRendered)
	}
	return objs, nil
}

// ReadsArrivals reports whether a ScaledObject has a trigger reading one of
// the exporter's arrival counts.
func ReadsArrivals(so *unstructured.Unstructured) bool {
	if so == nil {
		return false
	}
	triggers, _ := nested(so.Object, "spec", "triggers").([]any)
	for _, t := range triggers {
		switch nested(asMap(t), "metadata", "valueLocation") {
		case arrivalsShortField, arrivalsLongField:
			return true
		}
	}
	return false
}

// ExporterPools is the EXPORTER_POOLS value (the contract's exporter
// interface) for the local exporter of policy p: the program's own when its
// exporter gets one, else one pool in the policy's namespace with the
// policy's arrival windows; "" for a policy that needs none (the exporter
// then runs as today, from --namespace).
func ExporterPools(p Policy, objs *Objects) (string, error) {
	if v := objs.ExporterEnv["EXPORTER_POOLS"]; v != "" {
		return v, nil
	}
	if !p.UsesArrivals() {
		return "", nil
	}
	pool := contract.DefaultPoolName
	if wp := objs.Find("sandboxwarmpools"); wp != nil {
		pool = wp.GetName()
	}
	b, err := json.Marshal([]map[string]any{{
		"name": pool, "namespace": p.Namespace(), "selector": objs.ExporterEnv["EXPORTER_SELECTOR"],
		"arrivalWindowsSeconds": p.ArrivalWindows,
	}})
	return string(b), err
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
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
