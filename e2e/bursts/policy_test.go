package bursts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443"}
contexts:
- name: local
  context: {cluster: local, user: local}
current-context: local
users:
- name: local
  user: {token: abc}
`

func sharedConfig(t *testing.T) map[string]string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"clusterMode": "existing", "kubeconfig": path, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt", "minReplicas": "1", "maxReplicas": "30", "loadCap": "1",
	}
}

func kindsOf(o *Objects) string {
	var ks []string
	for _, u := range o.Items {
		ks = append(ks, u.GetKind())
	}
	return strings.Join(ks, ",")
}

// The benchmark's pools and ScaledObjects are the program's own: rendered by
// the program from its config, in a namespace per trace and policy.
func TestRenderGivesEachPolicyTheProgramsObjects(t *testing.T) {
	shared := sharedConfig(t)
	byName := map[string]Policy{}
	for _, p := range Policies(replay.TraceBurst, 1, 30, FixedSweep(30), false) {
		byName[p.Name] = p
	}

	fixed, err := Render(byName["fixed-30"], shared, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := kindsOf(fixed); got != "Namespace,SandboxTemplate,SandboxWarmPool" {
		t.Errorf("a fixed pool is namespace, template and pool only; got %s", got)
	}
	pool := fixed.Find("sandboxwarmpools")
	if pool.GetNamespace() != "bursts-burst-fixed-30" || pool.Object["spec"].(map[string]any)["replicas"] != float64(30) {
		t.Errorf("fixed-30 pool: namespace %s, spec %v; want bursts-burst-fixed-30 with 30 replicas", pool.GetNamespace(), pool.Object["spec"])
	}
	tmpl := fixed.Find("sandboxtemplates").Object
	if rc := nested(tmpl, "spec", "podTemplate", "spec", "runtimeClassName"); rc != "isolated-sandbox" {
		t.Errorf("the warm pods' runtime class is %v: the boot delay would not apply", rc)
	}

	blueprint, err := Render(byName["blueprint"], shared, "http://127.0.0.1:1/demand")
	if err != nil {
		t.Fatal(err)
	}
	if got := kindsOf(blueprint); got != "Namespace,ServiceAccount,Role,RoleBinding,SandboxTemplate,SandboxWarmPool,ScaledObject" {
		t.Errorf("an autoscaled policy also has the exporter's identity and the ScaledObject; got %s", got)
	}
	so := blueprint.Find("scaledobjects").Object
	if nested(so, "spec", "advanced", "scalingModifiers") != nil {
		t.Error("the blueprint's ScaledObject has a formula: it is not the one deployed by default")
	}
	trig := nested(so, "spec", "triggers").([]any)[0].(map[string]any)
	if trig["metadata"].(map[string]any)["url"] != "http://127.0.0.1:1/demand" || nested(so, "spec", "maxReplicaCount") != float64(30) || nested(so, "spec", "pollingInterval") != float64(15) {
		t.Errorf("blueprint ScaledObject %v: want the exporter URL, max 30 and the default polling interval 15", so["spec"])
	}
	if ReadsArrivals(blueprint.Find("scaledobjects")) {
		t.Error("the blueprint reads arrivals")
	}
	if _, ok := blueprint.ExporterEnv["EXPORTER_SELECTOR"]; !ok {
		t.Errorf("the exporter's environment was not read from the program's Deployment: %v", blueprint.ExporterEnv)
	}

	headroom, err := Render(byName["headroom-5"], shared, "http://127.0.0.1:1/demand")
	if err != nil {
		t.Fatal(err)
	}
	if f := nested(headroom.Find("scaledobjects").Object, "spec", "advanced", "scalingModifiers", "formula"); f != "claims + 5" {
		t.Errorf("headroom-5 formula %v, want claims + 5", f)
	}

	zero, err := Render(byName["zero"], shared, "http://127.0.0.1:1/demand")
	if err != nil {
		t.Fatal(err)
	}
	zso := zero.Find("scaledobjects").Object
	ztrig := nested(zso, "spec", "triggers").([]any)[0].(map[string]any)
	if nested(zso, "spec", "minReplicaCount") != float64(0) || ztrig["metadata"].(map[string]any)["activationTargetValue"] != "0" {
		t.Errorf("scale-to-zero ScaledObject %v: want minReplicaCount 0 and activation at 0 claims", zso["spec"])
	}
	if zero.Find("sandboxwarmpools").Object["spec"].(map[string]any)["replicas"] != float64(0) {
		t.Error("the scale-to-zero pool does not start empty")
	}
}

func TestRenderRefusesABadPolicyConfig(t *testing.T) {
	_, err := Render(Policy{Name: "bad", Config: map[string]string{"headroom": "40"}}, sharedConfig(t), "http://127.0.0.1:1/demand")
	if err == nil || !strings.Contains(err.Error(), "headroom is 40") {
		t.Fatalf("headroom above the maximum: err %v, want the program's validation message", err)
	}
}

// The arrivals policy is measured once the program understands the sizing
// keys: until then Render says so (ErrArrivalsNotRendered) instead of
// measuring the default ScaledObject under the arrivals name. Either way
// this test passes; it says which it saw.
func TestArrivalsPolicyIsRenderedByTheProgramOrRefused(t *testing.T) {
	var arrivals Policy
	for _, p := range Policies(replay.TraceDay, 1, 40, FixedSweep(40), true) {
		if p.UsesArrivals() {
			arrivals = p
		}
	}
	if arrivals.Name != "arrivals" || !reflect.DeepEqual(arrivals.ArrivalWindows, []int{30, 180}) {
		t.Fatalf("the arrivals policy: %+v", arrivals)
	}
	objs, err := Render(arrivals, sharedConfig(t), "http://127.0.0.1:1/demand")
	if errors.Is(err, ErrArrivalsNotRendered) {
		t.Logf("the program does not render the arrivals policy yet (%v): the benchmark leaves it out", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	so := objs.Find("scaledobjects")
	fields := map[string]bool{}
	for _, tr := range nested(so.Object, "spec", "triggers").([]any) {
		fields[fmt.Sprint(nested(tr.(map[string]any), "metadata", "valueLocation"))] = true
	}
	if !fields[arrivalsLongField] || !fields[arrivalsShortField] {
		t.Errorf("the arrivals ScaledObject reads %v; want arrivals_short and arrivals_long", fields)
	}
	pools, err := ExporterPools(arrivals, objs)
	if err != nil || !strings.Contains(pools, `"arrivalWindowsSeconds":[30,180]`) || !strings.Contains(pools, arrivals.Namespace()) {
		t.Errorf("EXPORTER_POOLS for the arrivals policy: %s (%v)", pools, err)
	}
	t.Logf("the program renders the arrivals policy: formula %v", nested(so.Object, "spec", "advanced", "scalingModifiers", "formula"))
}

func TestArrivalsSizingIsTheContractsSizingObject(t *testing.T) {
	got := DefaultArrivalsSizing().Config()[SizingKey]
	want := `{"bootSeconds":6,"hpaSyncSeconds":15,"longWindowSeconds":180,"policy":"arrivals","shortWindowSeconds":30,"warmHitTarget":0.99}`
	if got != want {
		t.Fatalf("sizing = %s\nwant     %s", got, want)
	}
}

func TestReadsArrivalsLooksAtTheTriggers(t *testing.T) {
	mk := func(fields ...string) *unstructured.Unstructured {
		var ts []any
		for _, f := range fields {
			ts = append(ts, map[string]any{"type": "metrics-api", "metadata": map[string]any{"valueLocation": f}})
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"triggers": ts}}}
	}
	for _, c := range []struct {
		so   *unstructured.Unstructured
		want bool
	}{
		{mk("active_claims", "arrivals_short", "arrivals_long"), true},
		{mk("arrivals_long"), true},
		{mk("active_claims"), false},
		{mk(), false},
		{nil, false},
	} {
		if got := ReadsArrivals(c.so); got != c.want {
			t.Errorf("ReadsArrivals(%v) = %v, want %v", c.so, got, c.want)
		}
	}
}

func TestExporterPoolsWiresTheArrivalWindows(t *testing.T) {
	arr := Policy{Name: "arrivals", Trace: replay.TraceDay, ArrivalWindows: []int{30, 180}}
	objs := &Objects{ExporterEnv: map[string]string{"EXPORTER_SELECTOR": ""}}
	got, err := ExporterPools(arr, objs)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"arrivalWindowsSeconds":[30,180],"name":"warm-pool","namespace":"bursts-day-arrivals","selector":""}]`; got != want {
		t.Errorf("EXPORTER_POOLS = %s\nwant            %s", got, want)
	}
	// The program's own value wins: it knows the pools it renders.
	objs.ExporterEnv["EXPORTER_POOLS"] = `[{"name":"p"}]`
	if got, _ := ExporterPools(arr, objs); got != `[{"name":"p"}]` {
		t.Errorf("the program's EXPORTER_POOLS was replaced: %s", got)
	}
	// A policy without arrival windows runs the exporter as today.
	if got, _ := ExporterPools(Policy{Name: "blueprint"}, &Objects{ExporterEnv: map[string]string{}}); got != "" {
		t.Errorf("the blueprint gets EXPORTER_POOLS %s", got)
	}
}

func TestPoliciesPerTrace(t *testing.T) {
	ps := Policies(replay.TraceDay, 1, 40, FixedSweep(40), false)
	var got []string
	for _, p := range ps {
		got = append(got, p.Name)
		if p.Trace != replay.TraceDay || !strings.HasPrefix(p.Namespace(), "bursts-day-") || len(p.Namespace()) > 63 {
			t.Errorf("%s: trace %q, namespace %q", p.Name, p.Trace, p.Namespace())
		}
	}
	want := "fixed-1,fixed-2,fixed-4,fixed-6,fixed-8,fixed-10,fixed-12,fixed-15,fixed-20,fixed-40,blueprint,headroom-3,headroom-5,headroom-6,zero"
	if strings.Join(got, ",") != want {
		t.Errorf("policies %s\nwant     %s", strings.Join(got, ","), want)
	}
	if n := len(Policies(replay.TraceDay, 1, 40, FixedSweep(40), true)); n != len(ps)+1 {
		t.Errorf("with arrivals: %d policies, want %d", n, len(ps)+1)
	}
}

func TestFixedSweepAndParseSizes(t *testing.T) {
	if got := FixedSweep(30); !reflect.DeepEqual(got, []int{1, 2, 4, 6, 8, 10, 12, 15, 20, 30}) {
		t.Errorf("FixedSweep(30) = %v", got)
	}
	if got := FixedSweep(10); !reflect.DeepEqual(got, []int{1, 2, 4, 6, 8, 10}) {
		t.Errorf("FixedSweep(10) = %v", got)
	}
	if got, err := ParseSizes("2, 6,30", 30); err != nil || !reflect.DeepEqual(got, []int{2, 6, 30}) {
		t.Errorf("ParseSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "31", "6,2", "4,4", "x"} {
		if _, err := ParseSizes(bad, 30); err == nil {
			t.Errorf("ParseSizes(%q) accepted", bad)
		}
	}
}
