package bursts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	"sigs.k8s.io/yaml"
)

// A trimmed copy of the shape of KWOK's default stages: a node stage and the
// pod-ready stage (selector, next).
const defaultStages = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - {key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: NotIn, values: ['True']}
  next:
    statusTemplate: "phase: Running"
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
  next:
    statusTemplate: |
      phase: Running
`

func TestBootDelaySplitsPodReadyByRuntimeClass(t *testing.T) {
	d := BootDelay{Boot: 6 * time.Second, RuntimeClassName: "isolated-sandbox"}
	out, err := d.Stages([]byte(defaultStages))
	if err != nil {
		t.Fatal(err)
	}
	stages := map[string]map[string]any{}
	for _, doc := range splitYAML(out) {
		var s map[string]any
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		stages[nested(s, "metadata", "name").(string)] = s
	}
	if len(stages) != 3 || stages["node-initialize"] == nil {
		t.Fatalf("want node-initialize, pod-ready and pod-ready-after-boot, got %d stages:\n%s", len(stages), out)
	}
	lastRequirement := func(name string) map[string]any {
		exprs := nested(stages[name], "spec", "selector", "matchExpressions").([]any)
		if len(exprs) != 2 {
			t.Fatalf("%s: want the original requirement plus the runtime class, got %v", name, exprs)
		}
		return exprs[1].(map[string]any)
	}
	for name, op := range map[string]string{"pod-ready": "NotIn", "pod-ready-after-boot": "In"} {
		r := lastRequirement(name)
		if r["key"] != ".spec.runtimeClassName" || r["operator"] != op || r["values"].([]any)[0] != "isolated-sandbox" {
			t.Errorf("%s: runtime class requirement %v, want %s isolated-sandbox", name, r, op)
		}
	}
	if delay := nested(stages["pod-ready"], "spec", "delay"); delay != nil {
		t.Errorf("the fast pod-ready stage got a delay: %v", delay)
	}
	delay, _ := nested(stages["pod-ready-after-boot"], "spec", "delay").(map[string]any)
	from, _ := delay["durationFrom"].(map[string]any)
	if delay["durationMilliseconds"] != float64(6000) || from["expressionFrom"] != d.Expression() {
		t.Errorf("boot delay %v: want the pod Ready 6 s after its binding", delay)
	}
	if !strings.Contains(string(out), "phase: Running") {
		t.Error("the status template was lost")
	}
}

func TestBootDelayRefusesWhatItCannotDo(t *testing.T) {
	good := BootDelay{Boot: 6 * time.Second, RuntimeClassName: "isolated-sandbox"}
	if _, err := good.Stages([]byte(strings.Split(defaultStages, "---\napiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: pod-ready")[0])); err == nil || !strings.Contains(err.Error(), "pod-ready") {
		t.Errorf("stages without pod-ready: err %v, want one naming pod-ready", err)
	}
	for _, bad := range []BootDelay{{Boot: 0, RuntimeClassName: "x"}, {Boot: 5500 * time.Millisecond, RuntimeClassName: "x"}, {Boot: time.Second}} {
		if _, err := bad.Stages([]byte(defaultStages)); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The boot runs from the pod's binding, as a VM-isolated sandbox's does on a node: a sandbox that
// waited 45 s for a node launch is Ready a boot after the node took it, not at once. Evaluated by
// gojq, the jq engine KWOK evaluates its stages' expressions with (at KWOK v0.8.0's version).
func TestBootDelayRunsFromTheBinding(t *testing.T) {
	d := BootDelay{Boot: 6 * time.Second, RuntimeClassName: "isolated-sandbox"}
	q, err := gojq.Parse(d.Expression())
	if err != nil {
		t.Fatal(err)
	}
	readyAt := func(pod string) string {
		var v any
		if err := json.Unmarshal([]byte(pod), &v); err != nil {
			t.Fatal(err)
		}
		out, ok := q.Run(v).Next()
		if !ok {
			t.Fatalf("no value for %s", pod)
		}
		if err, isErr := out.(error); isErr {
			t.Fatalf("%s: %v", pod, err)
		}
		s, _ := out.(string)
		return s
	}
	const created = `"creationTimestamp": "2026-12-07T02:40:00Z"`
	for _, c := range []struct{ name, pod, want string }{
		{"bound 45 s after its creation", `{"metadata": {` + created + `}, "status": {"conditions": [
			{"type": "Initialized", "status": "True", "lastTransitionTime": "2026-12-07T02:40:30Z"},
			{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-07T02:40:45Z"}]}}`, "2026-12-07T02:40:51Z"},
		{"bound at its creation", `{"metadata": {` + created + `}, "status": {"conditions": [
			{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-07T02:40:00Z"}]}}`, "2026-12-07T02:40:06Z"},
		{"not schedulable yet", `{"metadata": {` + created + `}, "status": {"conditions": [
			{"type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-12-07T02:40:01Z"}]}}`, "2026-12-07T02:40:06Z"},
		{"no conditions", `{"metadata": {` + created + `}, "status": {}}`, "2026-12-07T02:40:06Z"},
	} {
		if got := readyAt(c.pod); got != c.want {
			t.Errorf("a pod %s: Ready at %s, want %s", c.name, got, c.want)
		}
	}
}
