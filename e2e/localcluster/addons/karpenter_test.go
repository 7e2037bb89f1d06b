package addons

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// Unset options take the defaults; what Karpenter or its CRDs would refuse
// later (an instance type it cannot size or price, none at all, a duration
// that is not whole seconds) is refused before start.
func TestKarpenterOptionsDefaultsAndRefusals(t *testing.T) {
	o, err := KarpenterOptions{}.WithDefaults()
	if err != nil || o.LaunchDelay != 30*time.Second || o.ConsolidateAfter != 30*time.Second || len(o.InstanceTypes) != len(DefaultInstanceTypes) {
		t.Errorf("defaults %+v, %v", o, err)
	}
	for name, bad := range map[string]KarpenterOptions{
		"no instance types": {InstanceTypes: []procspec.InstanceType{}},
		"no price":          {InstanceTypes: []procspec.InstanceType{{Name: "x", CPU: "2", Memory: "4Gi"}}},
		"no size":           {InstanceTypes: []procspec.InstanceType{{Name: "x", PricePerHour: 1}}},
		"sub-second delay":  {LaunchDelay: 1500 * time.Millisecond},
		"negative":          {ConsolidateAfter: -time.Second},
	} {
		if _, err := bad.WithDefaults(); err == nil {
			t.Errorf("%s: accepted %+v", name, bad)
		}
	}
}

// The node pool launches the node class's nodes, consolidates when empty or
// underutilized after the setting (as a duration its CRD accepts), and labels
// its nodes for the sandboxes' RuntimeClass; the node class's registration
// delay is the launch delay.
func TestKarpenterNodePoolAndNodeClass(t *testing.T) {
	np := karpenterNodePool("general-purpose", "default", 30*time.Second)
	spec := np["spec"].(map[string]any)
	d := spec["disruption"].(map[string]any)
	if d["consolidationPolicy"] != "WhenEmptyOrUnderutilized" || d["consolidateAfter"] != "30s" {
		t.Errorf("disruption %v", d)
	}
	tmpl := spec["template"].(map[string]any)
	ref := tmpl["spec"].(map[string]any)["nodeClassRef"].(map[string]any)
	if ref["kind"] != "KWOKNodeClass" || ref["group"] != "karpenter.kwok.sh" || ref["name"] != "default" {
		t.Errorf("nodeClassRef %v", ref)
	}
	if tmpl["metadata"].(map[string]any)["labels"].(map[string]any)[procspec.SandboxNodeLabel] != "true" {
		t.Errorf("the pool's nodes lack %s: sandboxes would not schedule onto them", procspec.SandboxNodeLabel)
	}
	nc := karpenterNodeClass("default", 45*time.Second)
	if nc["kind"] != "KWOKNodeClass" || nc["spec"].(map[string]any)["nodeRegistrationDelay"] != "45s" {
		t.Errorf("node class %v", nc)
	}
	if b, _ := json.Marshal(np); !strings.Contains(string(b), `"apiVersion":"karpenter.sh/v1"`) {
		t.Errorf("node pool %s", b)
	}
}
