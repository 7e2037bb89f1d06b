package verifier

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// defaultDownStabilization is kube-controller-manager's default scale-down
// window, which applies when the HPA has no behavior of its own.
const defaultDownStabilization = 300 * time.Second

// hpasForPool lists the HPAs whose scaleTargetRef names the pool.
func (r *Runner) hpasForPool(ctx context.Context) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	l, err := r.kube.AutoscalingV2().HorizontalPodAutoscalers(r.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing HPAs: %w", err)
	}
	var out []autoscalingv2.HorizontalPodAutoscaler
	for _, h := range l.Items {
		if h.Spec.ScaleTargetRef.Name == r.cfg.Pool {
			out = append(out, h)
		}
	}
	return out, nil
}

func hpaNames(hs []autoscalingv2.HorizontalPodAutoscaler) string {
	if len(hs) == 0 {
		return "<none>"
	}
	var n []string
	for _, h := range hs {
		n = append(n, h.Name)
	}
	return strings.Join(n, ", ")
}

// ownedByScaledObject reports whether the HPA's owner is the named ScaledObject.
func ownedByScaledObject(h *autoscalingv2.HorizontalPodAutoscaler, so string) (bool, string) {
	var seen []string
	for _, o := range h.OwnerReferences {
		seen = append(seen, fmt.Sprintf("%s %s/%s", o.APIVersion, o.Kind, o.Name))
		if o.Kind == contract.ScaledObjectKind && o.Name == so && strings.HasPrefix(o.APIVersion, contract.KedaGroup+"/") {
			return true, fmt.Sprintf("ownerReferences[kind=ScaledObject].name=%s (uid %s)", o.Name, o.UID)
		}
	}
	if len(seen) == 0 {
		return false, "the HPA has no owner references"
	}
	return false, "the HPA's owners are " + strings.Join(seen, ", ")
}

// precondition: one HPA targets the pool itself, KEDA's ScaledObject owns it,
// its metric gives the per-claim mapping, and the load stays in its bounds.
func (r *Runner) precondition(ctx context.Context) error {
	const ph = "precondition"
	h, owned, err := r.poolHPA(ctx, ph)
	if err != nil {
		return err
	}
	so, err := r.readBounds(ctx, ph, h)
	if err != nil {
		return err
	}
	ok := r.judgeMapping(ph, h, so)
	moves := r.judgeLoad(ph, ok)
	if !owned || !ok || !moves || int64(r.cfg.LoadCap) > r.max || h.Spec.ScaleTargetRef.Kind != contract.SandboxWarmPoolKind {
		return errStop
	}
	r.mapped = true
	return nil
}

// poolHPA finds the one HPA that targets the pool and judges what it scales
// and who owns it.
func (r *Runner) poolHPA(ctx context.Context, ph string) (h *autoscalingv2.HorizontalPodAutoscaler, owned bool, err error) {
	hs, err := r.hpasForPool(ctx)
	if err != nil {
		r.rep.Fail(ph, "an HPA targets the pool", err.Error())
		return nil, false, errStop
	}
	r.rep.Printf("HPA whose scaleTargetRef names %s: %s", r.cfg.Pool, hpaNames(hs))
	if len(hs) != 1 {
		r.rep.Fail(ph, "an HPA targets the pool", fmt.Sprintf("%d HPAs name %s in their scaleTargetRef (%s); exactly one must", len(hs), r.cfg.Pool, hpaNames(hs)))
		return nil, false, errStop
	}
	h = &hs[0]
	r.rep.Pass(ph, "an HPA targets the pool", fmt.Sprintf("hpa/%s targets %s/%s, so its replica count is driven rather than fixed", h.Name, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name))

	ref := h.Spec.ScaleTargetRef
	r.rep.Judge(ph, "the HPA scales the SandboxWarmPool itself",
		ref.Kind == contract.SandboxWarmPoolKind && strings.HasPrefix(ref.APIVersion, contract.AgentSandboxExtensionsGroup+"/"),
		fmt.Sprintf("scaleTargetRef apiVersion=%s kind=%s name=%s", ref.APIVersion, ref.Kind, ref.Name))
	owned, ev := ownedByScaledObject(h, r.cfg.ScaledObject)
	r.rep.Judge(ph, "the HPA is owned by the ScaledObject", owned, ev+fmt.Sprintf(" (want scaledobject/%s)", r.cfg.ScaledObject))
	return h, owned, nil
}

// readBounds reads the ScaledObject's floor, ceiling, fallback and polling
// interval, and the HPA's scale-down window. The floor and ceiling are the
// ScaledObject's own: KEDA never sets the HPA's minReplicas below 1, so with
// minReplicaCount 0 the HPA's says 1.
func (r *Runner) readBounds(ctx context.Context, ph string, h *autoscalingv2.HorizontalPodAutoscaler) (*unstructured.Unstructured, error) {
	so, err := r.dyn.Resource(gvr.ScaledObject).Namespace(r.cfg.Namespace).Get(ctx, r.cfg.ScaledObject, metav1.GetOptions{})
	if err != nil {
		err = fmt.Errorf("reading scaledobject/%s: %w", r.cfg.ScaledObject, err)
	}
	var soMin, soMax int64
	var bev string
	if err == nil {
		soMin, soMax, bev, err = r.scaledObjectBounds(so)
	}
	if err != nil {
		r.rep.Fail(ph, "the ScaledObject's bounds are readable", err.Error())
		return nil, errStop
	}
	r.min, r.max = soMin, soMax
	r.judgeFallbackUsable(ph, so)
	r.checkFallback(ctx, ph, so)
	hpaMin := int64(1)
	if h.Spec.MinReplicas != nil {
		hpaMin = int64(*h.Spec.MinReplicas)
	}
	r.rep.Printf("%s; its HPA has minReplicas=%d maxReplicas=%d (KEDA sets the HPA's minimum to at least 1)", bev, hpaMin, h.Spec.MaxReplicas)
	r.downPace = readScaleDownPace(h.Spec.Behavior, soMax, soMin)
	r.judgeScaleUp(ph, h, so)
	r.pollingInterval = r.scaledObjectPollingInterval(so)
	return so, nil
}

// judgeMapping judges whether the HPA's metric maps claims to warm sandboxes
// by a mapping verify can hold each step to, the one the stack deployed.
func (r *Runner) judgeMapping(ph string, h *autoscalingv2.HorizontalPodAutoscaler, so *unstructured.Unstructured) bool {
	target, mev, ok := averageValueTarget(h)
	r.target = target
	if ok {
		// A headroom formula (the program's `headroom` key) adds whole targets'
		// worth to the count; the arrivals formula is evaluated on the exporter's
		// readings; any other formula is a mapping verify cannot hold each step
		// to, so it fails here rather than at every step.
		hev, herr := r.scaledObjectMapping(so, target)
		if herr != nil {
			ok, mev = false, mev+"; "+herr.Error()
		} else {
			mev += "; " + hev
		}
	}
	if ok && r.cfg.SizingPolicy != "" && r.cfg.SizingPolicy != r.sizing() {
		ok = false
		mev += fmt.Sprintf("; the stack's sizingPolicy output for this pool is %q, but the live ScaledObject carries the %s mapping: the cluster is not what the stack deployed (run pulumi up, or read the outputs of the stack that deployed it)",
			r.cfg.SizingPolicy, r.sizing())
	}
	if ok {
		r.rep.SetSizing(r.sizing())
	}
	r.rep.Judge(ph, "the HPA's metric maps claims to warm sandboxes", ok, mev)
	return ok
}

// judgeLoad judges whether verify's load stays within the ceiling and, with a
// mapping, whether it can move the pool above its floor.
func (r *Runner) judgeLoad(ph string, mapped bool) bool {
	outs := ""
	if r.cfg.OutputsMin != 0 || r.cfg.OutputsMax != 0 {
		outs = fmt.Sprintf("; stack outputs minReplicas=%d maxReplicas=%d", r.cfg.OutputsMin, r.cfg.OutputsMax)
	}
	r.rep.Printf("ScaledObject bounds: minReplicaCount=%d maxReplicaCount=%d, %s, pollingInterval %s (load generator cap: %d claims%s)",
		r.min, r.max, r.downPace.how, r.pollingInterval, r.cfg.LoadCap, outs)
	if r.min == 0 {
		r.rep.Printf("minReplicaCount is 0: with no claims the pool scales to zero, so there is no warm sandbox at rest and the first claim is a cold start by design; the adoption checks are N/A unless that claim is adopted warm anyway")
	}
	r.rep.Judge(ph, "the load verify generates is within the bound", int64(r.cfg.LoadCap) <= r.max,
		fmt.Sprintf("load cap %d claims, maxReplicaCount %d", r.cfg.LoadCap, r.max))
	if !mapped {
		return true
	}
	// Without a step above the floor every step reads "unchanged" and the
	// control's flat line is what the pool would do anyway: no proof.
	floor, top, how, err := r.loadReach()
	verdict := "above the floor, so the load can show a scaling decision"
	moves := err == nil && top > floor
	switch {
	case err != nil:
		verdict = err.Error()
	case !moves:
		verdict = "not above the floor, so no step of this run could show a scaling decision (and the control's flat line would prove nothing); raise maxReplicas and --load-cap, or lower targetValue"
	}
	r.rep.Judge(ph, "the load can move the pool", moves, how+": "+verdict)
	return moves
}

// scaledObjectBounds reads minReplicaCount and maxReplicaCount from the
// ScaledObject, with KEDA's defaults (0 and 100) when they are absent.
func (r *Runner) scaledObjectBounds(so *unstructured.Unstructured) (int64, int64, string, error) {
	read := func(key string, def int64) (int64, string, error) {
		v, found, err := unstructured.NestedFieldNoCopy(so.Object, "spec", key)
		if err != nil || !found || v == nil {
			return def, fmt.Sprintf("%s=%d (absent: KEDA's default)", key, def), nil
		}
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case int32:
			n = int64(x)
		case int:
			n = int64(x)
		case float64:
			n = int64(x)
			if float64(n) != x {
				return 0, "", fmt.Errorf("scaledobject/%s spec.%s is %v, not a whole number", r.cfg.ScaledObject, key, x)
			}
		default:
			return 0, "", fmt.Errorf("scaledobject/%s spec.%s is %v (%T), not a number", r.cfg.ScaledObject, key, v, v)
		}
		return n, fmt.Sprintf("%s=%d", key, n), nil
	}
	lo, loEv, err := read("minReplicaCount", 0)
	if err != nil {
		return 0, 0, "", err
	}
	hi, hiEv, err := read("maxReplicaCount", 100)
	if err != nil {
		return 0, 0, "", err
	}
	if lo < 0 || hi < 1 || lo > hi {
		return 0, 0, "", fmt.Errorf("scaledobject/%s has minReplicaCount=%d maxReplicaCount=%d: not bounds a pool can follow", r.cfg.ScaledObject, lo, hi)
	}
	return lo, hi, fmt.Sprintf("scaledobject/%s spec: %s %s", r.cfg.ScaledObject, loEv, hiEv), nil
}

// averageValueTarget reads the HPA's single external metric: AverageValue
// gives desired = ceil(metric / target), which every step can be held to.
func averageValueTarget(h *autoscalingv2.HorizontalPodAutoscaler) (float64, string, bool) {
	if len(h.Spec.Metrics) != 1 {
		return 0, fmt.Sprintf("the HPA has %d metrics; verify's mapping needs exactly one", len(h.Spec.Metrics)), false
	}
	m := h.Spec.Metrics[0]
	if m.Type != autoscalingv2.ExternalMetricSourceType || m.External == nil {
		return 0, fmt.Sprintf("the HPA's metric is of type %s, not External", m.Type), false
	}
	t := m.External.Target
	if t.Type != autoscalingv2.AverageValueMetricType || t.AverageValue == nil {
		return 0, fmt.Sprintf("metric %s has target type %s: only AverageValue gives one warm sandbox per target claims (Value multiplies by the ready count)", m.External.Metric.Name, t.Type), false
	}
	v := t.AverageValue.AsApproximateFloat64()
	if v <= 0 {
		return 0, fmt.Sprintf("metric %s has AverageValue %s", m.External.Metric.Name, t.AverageValue), false
	}
	return v, fmt.Sprintf("external metric %s, target AverageValue=%s: desired = ceil(claims / %s) within [min, max]", m.External.Metric.Name, t.AverageValue, t.AverageValue), true
}

// sizing names the mapping the steps are held to.
func (r *Runner) sizing() string {
	if r.formula != nil {
		return "arrivals"
	}
	return "claims"
}

// zeroDecision is the pool's size at no demand: its floor.
func (r *Runner) zeroDecision() (int64, error) {
	if r.formula == nil {
		return r.expected(0), nil
	}
	d, _, err := r.formulaDecision(r.formula.uniform(0))
	return d, err
}

// loadReach is the decision at no demand and at the load cap, and how it was reached.
func (r *Runner) loadReach() (floor, top int64, how string, err error) {
	n := r.cfg.LoadCap
	if r.formula == nil {
		floor, top = r.expected(0), r.expected(n)
		return floor, top, fmt.Sprintf("at the load cap the HPA would want clamp(ceil(%d/%g)+%d=%d, %d, %d)=%d warm sandboxes, at 0 claims %d",
			n, r.target, r.headroom, r.ceil(n)+r.headroom, r.min, r.max, top, floor), nil
	}
	floor, zv, err := r.formulaDecision(r.formula.uniform(0))
	if err != nil {
		return 0, 0, "", err
	}
	top, tv, err := r.formulaDecision(r.formula.uniform(float64(n)))
	if err != nil {
		return 0, 0, "", err
	}
	return floor, top, fmt.Sprintf("at the load cap (%d claims created within both windows: %s) the formula gives %g, so the HPA would want clamp(ceil(%g/%g), %d, %d)=%d warm sandboxes; at no demand (%s) it gives %g -> %d",
		n, formatInputs(r.formula.uniform(float64(n))), tv, tv, r.target, r.min, r.max, top, formatInputs(r.formula.uniform(0)), zv, floor), nil
}

// scaledObjectPollingInterval is spec.pollingInterval (KEDA's default 30 s when absent).
func (r *Runner) scaledObjectPollingInterval(so *unstructured.Unstructured) time.Duration {
	if so == nil {
		return 30 * time.Second
	}
	v, found, err := unstructured.NestedFieldNoCopy(so.Object, "spec", "pollingInterval")
	if err != nil || !found {
		return 30 * time.Second
	}
	switch x := v.(type) {
	case int64:
		return time.Duration(x) * time.Second
	case float64:
		return time.Duration(x * float64(time.Second))
	}
	return 30 * time.Second
}

// scaledObjectMapping reads the ScaledObject's formula: none or headroom (the claims mapping),
// the arrivals formula, or a refusal that says why.
func (r *Runner) scaledObjectMapping(so *unstructured.Unstructured, target float64) (string, error) {
	headroom, hev, herr := r.scaledObjectHeadroom(so, target)
	if herr == nil {
		r.headroom, r.formula = headroom, nil
		return hev, nil
	}
	f, _, _ := unstructured.NestedString(so.Object, "spec", "advanced", "scalingModifiers", "formula")
	if f == "" {
		return "", herr
	}
	m, err := recognizeArrivals(so, f, r.cfg.ExporterPath)
	switch {
	case errors.Is(err, errNotArrivals) && headroomFormula.MatchString(f):
		return "", herr
	case errors.Is(err, errNotArrivals):
		return "", fmt.Errorf("scaledobject/%s has the scalingModifiers formula %q, which is neither <trigger> + <constant> nor the arrivals formula (float(...) over metrics-api triggers arrivals_short and arrivals_long): verify cannot hold each step to it", r.cfg.ScaledObject, f)
	case err != nil:
		return "", fmt.Errorf("scaledobject/%s: %v: verify cannot hold each step to it", r.cfg.ScaledObject, err)
	}
	r.headroom, r.formula = 0, m
	var trig []string
	for _, t := range m.triggers {
		if t.window == nil {
			trig = append(trig, fmt.Sprintf("%s <- %s at %s", t.name, t.valueLocation, t.url))
		}
	}
	if w := m.windows(); w != "" {
		trig = append(trig, "schedule windows "+w)
	}
	return fmt.Sprintf("the arrivals formula %q over triggers %s, compiled as KEDA compiles it: each step is held to clamp(ceil(formula / %g), min, max) on the exporter's readings",
		f, strings.Join(trig, ", "), target), nil
}

// headroomFormula is the simplest scalingModifiers formula verify models: one
// trigger's value, divided by a constant or not, plus a constant, as the program
// writes it for `headroom` ("claims + 2", "claims / 1.5 + 2").
var headroomFormula = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_-]*\s*(?:/\s*([0-9]+(?:\.[0-9]+)?)\s*)?\+\s*([0-9]+(?:\.[0-9]+)?)\s*$`)

// scaledObjectHeadroom reads spec.advanced.scalingModifiers.formula: absent
// means no headroom; "claims [/ d] + K" with K a whole number of targets means
// K/target warm sandboxes above ceil(claims/(d x target)), and sets r.target to
// d x target, the claims per warm sandbox; anything else is an error.
func (r *Runner) scaledObjectHeadroom(so *unstructured.Unstructured, target float64) (int64, string, error) {
	f, found, err := unstructured.NestedString(so.Object, "spec", "advanced", "scalingModifiers", "formula")
	if err != nil {
		return 0, "", fmt.Errorf("scaledobject/%s spec.advanced.scalingModifiers.formula is not a string: %w", r.cfg.ScaledObject, err)
	}
	if !found || strings.TrimSpace(f) == "" {
		return 0, "no scalingModifiers formula: no headroom", nil
	}
	m := headroomFormula.FindStringSubmatch(f)
	if m == nil {
		return 0, "", fmt.Errorf("scaledobject/%s has the scalingModifiers formula %q, which is not <trigger> [/ <constant>] + <constant>: verify cannot hold each step to it", r.cfg.ScaledObject, f)
	}
	divisor := 1.0
	if m[1] != "" {
		divisor, _ = strconv.ParseFloat(m[1], 64)
		if divisor <= 0 {
			return 0, "", fmt.Errorf("scaledobject/%s formula %q divides by %s: not a target verify can hold steps to", r.cfg.ScaledObject, f, m[1])
		}
	}
	k, _ := strconv.ParseFloat(m[2], 64)
	h := k / target
	if h != math.Trunc(h) {
		return 0, "", fmt.Errorf("scaledobject/%s formula %q adds %g, not a whole number of targets (%g): the headroom in warm sandboxes would be %g", r.cfg.ScaledObject, f, k, target, h)
	}
	r.target = target * divisor
	return int64(h), fmt.Sprintf("scalingModifiers formula %q: headroom %d warm sandbox(es) above ceil(claims / %g)", f, int64(h), r.target), nil
}
