package verifier

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// The arrivals policy's ScaledObject, as the program writes it: two metrics-api triggers named
// arrivals_short and arrivals_long on the pool's exporter URL (valueLocation the fields of the
// same names) and a scalingModifiers formula over them that starts with float(. KEDA runs the
// formula with github.com/expr-lang/expr (v1.17.8 in KEDA v2.21.0): each trigger's value by its
// name, the result wrapped in float() unless it already starts so. verify compiles the live
// formula the same way and holds each step to it: spec.replicas = clamp(ceil(value / target),
// minReplicaCount, maxReplicaCount), the HPA's AverageValue decision on KEDA's composite metric.

// kedaMetricsAPI is the trigger type whose value verify can read as KEDA does: one GET of the
// trigger's URL, the number at its valueLocation.
const kedaMetricsAPI = "metrics-api"

// kedaCron is the trigger type of a schedule window: its warm count inside the window, 0
// outside, which verify works out from the window as KEDA's cron scaler does.
const kedaCron = "cron"

// formulaTrigger is one named trigger the formula reads: a field of the exporter's answer, or
// a schedule window (window set).
type formulaTrigger struct {
	name, valueLocation, url string
	window                   *schedule.Window
}

// formulaMapping is a scalingModifiers formula verify can evaluate on the exporter's answer.
type formulaMapping struct {
	formula  string
	program  *vm.Program
	triggers []formulaTrigger
}

// errNotArrivals: the ScaledObject does not carry the arrivals triggers, so its formula is not
// the arrivals policy's (the caller says what it is instead).
var errNotArrivals = errors.New("no arrivals_short and arrivals_long triggers")

// recognizeArrivals reads the live ScaledObject's triggers and formula. It returns
// errNotArrivals when the arrivals triggers are absent, and another error saying why when they
// are there but verify cannot read or run what the formula needs.
func recognizeArrivals(so *unstructured.Unstructured, formula, exporterPath string) (*formulaMapping, error) {
	raw, _, err := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if err != nil {
		return nil, fmt.Errorf("spec.triggers is not a list: %w", err)
	}
	var triggers []formulaTrigger
	types := map[string]string{}
	formats := map[string]string{}
	for i, t := range raw {
		m, ok := t.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.triggers[%d] is not an object", i)
		}
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		// KEDA's formula environment: every named trigger but the resource ones.
		if name == "" || typ == "cpu" || typ == "memory" {
			continue
		}
		md, _ := m["metadata"].(map[string]any)
		str := func(k string) string { v, _ := md[k].(string); return v }
		ft := formulaTrigger{name: name, valueLocation: str("valueLocation"), url: str("url")}
		if typ == kedaCron {
			w, err := cronWindow(name, str)
			if err != nil {
				return nil, err
			}
			ft.window = &w
		}
		triggers = append(triggers, ft)
		types[name], formats[name] = typ, str("format")
	}
	short, long := contract.DemandArrivalsShortField, contract.DemandArrivalsLongField
	if types[short] != kedaMetricsAPI || types[long] != kedaMetricsAPI {
		return nil, errNotArrivals
	}
	if !strings.HasPrefix(formula, "float(") {
		return nil, fmt.Errorf("the arrivals triggers are there, but the formula %q does not start with float( as the program writes it", formula)
	}
	sort.Slice(triggers, func(i, j int) bool { return triggers[i].name < triggers[j].name })
	for _, t := range triggers {
		switch {
		case t.window != nil:
			continue
		case types[t.name] != kedaMetricsAPI:
			return nil, fmt.Errorf("trigger %s is of type %s: verify reads only metrics-api triggers, as KEDA does, from the exporter, and cron triggers (schedule windows)", t.name, types[t.name])
		case (t.name == short || t.name == long) && t.valueLocation != t.name:
			return nil, fmt.Errorf("trigger %s reads valueLocation %q, not the exporter's %s field", t.name, t.valueLocation, t.name)
		case t.valueLocation == "" || strings.ContainsAny(t.valueLocation, ".#|*?[]{}()@\\"):
			return nil, fmt.Errorf("trigger %s reads valueLocation %q: verify reads one top-level field of the answer", t.name, t.valueLocation)
		case formats[t.name] != "" && formats[t.name] != "json":
			return nil, fmt.Errorf("trigger %s reads format %s, not the exporter's json", t.name, formats[t.name])
		case urlPath(t.url) != exporterPath:
			return nil, fmt.Errorf("trigger %s reads %s, not the pool's exporter path /%s that verify reads (the pools output's exporterUrl)", t.name, t.url, exporterPath)
		}
	}
	m := &formulaMapping{formula: formula, triggers: triggers}
	// As KEDA validates it: compiled over the named triggers, run once on -1 for each.
	dummy := map[string]float64{}
	for _, t := range triggers {
		dummy[t.name] = -1
	}
	if m.program, err = expr.Compile(formula, expr.Env(dummy), expr.AsFloat64()); err != nil {
		return nil, fmt.Errorf("the formula %q does not compile as KEDA compiles it: %v", formula, err)
	}
	if _, err := expr.Run(m.program, dummy); err != nil {
		return nil, fmt.Errorf("the formula %q does not run on KEDA's validation values (-1 for each trigger): %v", formula, err)
	}
	return m, nil
}

// cronWindow reads a cron trigger's metadata as the schedule window it is; what KEDA would
// refuse is an error naming the trigger.
func cronWindow(name string, str func(string) string) (schedule.Window, error) {
	w := schedule.Window{Start: str("start"), End: str("end"), Timezone: str("timezone")}
	warm, err := strconv.Atoi(str("desiredReplicas"))
	if err != nil || warm < 1 {
		return w, fmt.Errorf("trigger %s (cron) has desiredReplicas %q, not a whole number of 1 or more", name, str("desiredReplicas"))
	}
	w.Warm = warm
	if err := w.Check(); err != nil {
		return w, fmt.Errorf("trigger %s (cron): %v", name, err)
	}
	return w, nil
}

// windowValue is a schedule trigger's value at t, as KEDA's cron scaler gives it.
func windowValue(t formulaTrigger, at time.Time) float64 {
	v, _ := t.window.Value(at) // checked when the trigger was read
	return v
}

// inputs are the formula's variables from one exporter answer: each trigger's value at its
// valueLocation, a schedule window's when verify reads the answer (KEDA evaluates it on its own
// clock at its poll, within a polling interval of that). A field the answer lacks is an error,
// never 0.
func (m *formulaMapping) inputs(d DemandReading) (map[string]float64, error) {
	in := map[string]float64{}
	for _, t := range m.triggers {
		if t.window != nil {
			in[t.name] = windowValue(t, time.Now())
			continue
		}
		v, ok := d.Fields[t.valueLocation]
		if !ok {
			return nil, fmt.Errorf("the exporter's answer (%s) has no %s, which trigger %s reads: is the pool's arrival windows configured in the exporter?", d.Via, t.valueLocation, t.name)
		}
		in[t.name] = v
	}
	return in, nil
}

// uniform are the inputs when every exporter trigger reads n: no demand (0), or n claims held
// that were all created within both windows (the load verify puts on a quiet pool); the schedule
// windows read what they give now.
func (m *formulaMapping) uniform(n float64) map[string]float64 {
	in := map[string]float64{}
	for _, t := range m.triggers {
		in[t.name] = n
		if t.window != nil {
			in[t.name] = windowValue(t, time.Now())
		}
	}
	return in
}

// windows describes the schedule triggers and whether each is in force now, for the evidence.
func (m *formulaMapping) windows() string {
	var parts []string
	now := time.Now()
	for _, t := range m.triggers {
		if t.window == nil {
			continue
		}
		state := "not in force now (0)"
		if v := windowValue(t, now); v > 0 {
			state = fmt.Sprintf("in force now (%g)", v)
		}
		parts = append(parts, fmt.Sprintf("%s = %d warm from %q to %q in %s, %s", t.name, t.window.Warm, t.window.Start, t.window.End, t.window.Timezone, state))
	}
	return strings.Join(parts, "; ")
}

// eval runs the formula on the inputs.
func (m *formulaMapping) eval(in map[string]float64) (float64, error) {
	env := map[string]float64{}
	for k, v := range in {
		env[k] = v
	}
	out, err := expr.Run(m.program, env)
	if err != nil {
		return 0, fmt.Errorf("running the formula on %s: %w", formatInputs(in), err)
	}
	f, ok := out.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("the formula gave %v (%T) on %s, not a number", out, out, formatInputs(in))
	}
	return f, nil
}

// decide is the HPA's decision on a metric value: ceil(value / target) within [min, max].
func (r *Runner) decide(value float64) int64 {
	c := int64(math.Ceil(value / r.target))
	return max(r.min, min(c, r.max))
}

// formulaDecision is the decision for the given inputs, with the formula's value.
func (r *Runner) formulaDecision(in map[string]float64) (int64, float64, error) {
	v, err := r.formula.eval(in)
	if err != nil {
		return 0, 0, err
	}
	return r.decide(v), v, nil
}

// formatInputs prints the inputs in name order: "arrivals_long=3 arrivals_short=3".
func formatInputs(in map[string]float64) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, in[k])
	}
	return strings.Join(parts, " ")
}
