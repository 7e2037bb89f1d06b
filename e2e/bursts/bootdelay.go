package bursts

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// BootDelay makes KWOK report a sandbox pod Running and Ready only Boot after
// it was bound to its node: the cold start of a VM-isolated sandbox, which
// begins when the node's runtime starts the VM, not when the pod object is
// created (a sandbox that waited for a node launch still boots in full once
// the node takes it, as on EKS). The deadline is anchored at the pod's
// PodScheduled condition (the API server sets it True at the binding, whole
// seconds), or its creationTimestamp if that is missing, not at KWOK's last
// look at the pod: KWOK restarts a stage's delay whenever the pod changes, and
// controllers touch a booting pod. Since the real binding falls uniformly
// within its second, the boot comes out uniform in (Boot-1s, Boot].
// The pod gets its IP in the same step, as with a VM runtime (the pod sandbox
// is the VM, so its IP is known only once it has booted); agent-sandbox
// adopts only networked warm sandboxes, so a claim never adopts one that is
// still booting: it waits up to its grace period for one, then starts cold.
type BootDelay struct {
	Boot time.Duration // whole seconds
	// RuntimeClassName selects the pods that boot slowly (the sandboxes);
	// every other pod keeps KWOK's immediate readiness.
	RuntimeClassName string
}

// podReadyStage is the name of KWOK's stage that makes a scheduled pod Ready.
const podReadyStage = "pod-ready"

// Stages returns the default stages with the pod-ready stage split in two:
// the original for every pod but the sandboxes, and a copy for the sandboxes
// that waits the boot delay first. For Options.KwokStages.
func (d BootDelay) Stages(defaults []byte) ([]byte, error) {
	if d.Boot < time.Second || d.Boot%time.Second != 0 || d.RuntimeClassName == "" {
		return nil, fmt.Errorf("boot delay %s for runtime class %q: need whole seconds, at least 1s, and a runtime class", d.Boot, d.RuntimeClassName)
	}
	var out bytes.Buffer
	found := false
	for _, doc := range splitYAML(defaults) {
		var stage map[string]any
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			return nil, fmt.Errorf("a default KWOK stage does not parse: %w", err)
		}
		name, _ := nested(stage, "metadata", "name").(string)
		if name != podReadyStage {
			writeDoc(&out, doc)
			continue
		}
		found = true
		// Documents are freshly unmarshalled: editing one copy leaves the other.
		var slow map[string]any
		_ = yaml.Unmarshal([]byte(doc), &slow)
		if err := addRuntimeClassRequirement(stage, "NotIn", d.RuntimeClassName); err != nil {
			return nil, err
		}
		if err := addRuntimeClassRequirement(slow, "In", d.RuntimeClassName); err != nil {
			return nil, err
		}
		slow["metadata"].(map[string]any)["name"] = podReadyStage + "-after-boot"
		// A time from the expression becomes "that time minus now"; the
		// milliseconds are only the fallback should the expression fail.
		slow["spec"].(map[string]any)["delay"] = map[string]any{
			"durationMilliseconds": d.Boot.Milliseconds(),
			"durationFrom":         map[string]any{"expressionFrom": d.Expression()},
		}
		for _, s := range []map[string]any{stage, slow} {
			b, err := yaml.Marshal(s)
			if err != nil {
				return nil, err
			}
			writeDoc(&out, string(b))
		}
	}
	if !found {
		return nil, fmt.Errorf("no stage named %q among KWOK's defaults: the boot delay has nothing to attach to", podReadyStage)
	}
	return out.Bytes(), nil
}

// Expression is the jq expression KWOK evaluates on the pod: its Ready time, Boot after the
// binding (the PodScheduled condition's True transition) or, without one, after the creation.
func (d BootDelay) Expression() string {
	return fmt.Sprintf(`[.status.conditions[]? | select(.type == "PodScheduled" and .status == "True") | .lastTransitionTime][0] // .metadata.creationTimestamp | fromdateiso8601 + %d | todateiso8601`, int(d.Boot/time.Second))
}

// Range is the boot time the stage gives, measured from the real binding.
func (d BootDelay) Range() (lo, hi time.Duration) { return d.Boot - time.Second, d.Boot }

func addRuntimeClassRequirement(stage map[string]any, op, class string) error {
	sel, ok := nested(stage, "spec", "selector").(map[string]any)
	if !ok {
		return errors.New("the pod-ready stage has no spec.selector")
	}
	exprs, _ := sel["matchExpressions"].([]any)
	sel["matchExpressions"] = append(exprs, map[string]any{
		"key": ".spec.runtimeClassName", "operator": op, "values": []any{class},
	})
	return nil
}

func splitYAML(b []byte) []string {
	var docs []string
	for _, d := range strings.Split("\n"+string(b), "\n---") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, strings.TrimPrefix(d, "\n"))
		}
	}
	return docs
}

func writeDoc(out *bytes.Buffer, doc string) {
	out.WriteString("---\n")
	out.WriteString(strings.TrimRight(doc, "\n"))
	out.WriteString("\n")
}

func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
