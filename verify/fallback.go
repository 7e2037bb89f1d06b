package main

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkFallback judges whether KEDA is reading the exporter, from the ScaledObject's own status:
// its Fallback condition and the health KEDA keeps per trigger. A pool on its fallback is frozen
// at its size (currentReplicasIfHigher) whatever demand does: right for a blip, wrong for a
// broken read path, and nothing else a user looks at says so. KEDA writes both only once it
// has read the triggers with a fallback configured; before that there is nothing to judge.
func (r *Runner) checkFallback(phase string, so *unstructured.Unstructured) {
	const name = "KEDA reads the exporter: no fallback active, no trigger failing"
	var fallback, fallbackEv string
	conds, _, _ := unstructured.NestedSlice(so.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Fallback" {
			fallback = fmt.Sprint(m["status"])
			fallbackEv = fmt.Sprintf("Fallback=%s (%v: %v)", m["status"], m["reason"], m["message"])
		}
	}
	health, _, _ := unstructured.NestedMap(so.Object, "status", "health")
	var failing, healthEv []string
	for metric, h := range health {
		m, _ := h.(map[string]any)
		healthEv = append(healthEv, fmt.Sprintf("%s %v after %v failures", metric, m["status"], m["numberOfFailures"]))
		if m["status"] == "Failing" {
			failing = append(failing, metric)
		}
	}
	sort.Strings(healthEv)
	sort.Strings(failing)
	if fallbackEv == "" {
		fallbackEv = "no Fallback condition"
	}
	ev := fmt.Sprintf("scaledobject/%s: %s; health: %s", so.GetName(), fallbackEv, orNone(healthEv))
	switch {
	case fallback == "True" || len(failing) > 0:
		r.rep.Fail(phase, name, ev+fmt.Sprintf("; KEDA cannot read %s, so the pool is held at its size whatever demand does: check that the exporter's Service answers and KEDA resolves its name (the README's Alerting says what to watch)", orNone(failing)))
	case fallback == "False":
		r.rep.Pass(phase, name, ev)
	default:
		r.rep.NA(phase, name, ev+"; KEDA has not judged its triggers yet, so there is no reading to hold")
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return strings.Join(s, ", ")
}
