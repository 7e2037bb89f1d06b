package bursts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
// its components from its config, in its namespace per policy.
func TestRenderGivesEachPolicyTheProgramsObjects(t *testing.T) {
	shared := sharedConfig(t)
	byName := map[string]Policy{}
	for _, p := range Policies(1, 30) {
		byName[p.Name] = p
	}

	fixed, err := Render(byName["fixed-max"], shared, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := kindsOf(fixed); got != "Namespace,SandboxTemplate,SandboxWarmPool" {
		t.Errorf("a fixed pool is namespace, template and pool only; got %s", got)
	}
	pool := fixed.Find("sandboxwarmpools")
	if pool.GetNamespace() != "bursts-fixed-max" || pool.Object["spec"].(map[string]any)["replicas"] != float64(30) {
		t.Errorf("fixed-max pool: namespace %s, spec %v; want bursts-fixed-max with 30 replicas", pool.GetNamespace(), pool.Object["spec"])
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

	headroom, err := Render(byName["headroom-5"], shared, "http://127.0.0.1:1/demand")
	if err != nil {
		t.Fatal(err)
	}
	if f := nested(headroom.Find("scaledobjects").Object, "spec", "advanced", "scalingModifiers", "formula"); f != "claims + 5" {
		t.Errorf("headroom-5 formula %v, want claims + 5", f)
	}
}

func TestRenderRefusesABadPolicyConfig(t *testing.T) {
	_, err := Render(Policy{Name: "bad", Config: map[string]string{"headroom": "40"}}, sharedConfig(t), "http://127.0.0.1:1/demand")
	if err == nil || !strings.Contains(err.Error(), "headroom is 40") {
		t.Fatalf("headroom above the maximum: err %v, want the program's validation message", err)
	}
}
