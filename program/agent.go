package program

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// envName is what a container's environment variable may be called (C identifier-ish, as
// the API server's validation allows: no '=' and not empty).
var envName = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)

// agentResources are the resource names a sandbox's container may request.
var agentResources = []string{"cpu", "memory", "ephemeral-storage"}

// validateAgent checks a template the team configured: every field's grammar, and then the pod
// the program would render from it against the restricted Pod Security level the namespace
// enforces, so a template the API server would reject is refused here, before anything exists.
func validateAgent(at string, a components.Agent, add func(string, ...any)) {
	if !validImageReference(a.Image) {
		add("%simage %q is not an image reference; write it as registry/path:tag or registry/path@sha256:<digest>, e.g. %s", at, a.Image, contract.WarmPodImage)
	} else if !strings.Contains(a.Image, "@") && (!strings.Contains(path.Base(a.Image), ":") || strings.HasSuffix(a.Image, ":latest")) {
		add("%simage %q has no pinned tag; pin a version or a digest (registry/path:1.2.3 or @sha256:...) so every warm sandbox runs the same agent", at, a.Image)
	}
	if a.RunAsUser < 1 {
		add("%srunAsUser is %d; a sandbox runs as a non-root user (the namespace enforces Pod Security restricted, which rejects UID 0); use the UID your image's agent user has, e.g. %d", at, a.RunAsUser, components.SandboxUID)
	} else if errs := validation.IsValidUserID(int64(a.RunAsUser)); len(errs) > 0 {
		add("%srunAsUser is %d, which the API server rejects (%s); use the UID your image's agent user has, e.g. %d", at, a.RunAsUser, strings.Join(errs, "; "), components.SandboxUID)
	}
	for name := range a.Env {
		if !envName.MatchString(name) {
			add("%senv has %q, which is not an environment variable name (letters, digits, '_', '-', '.', not starting with a digit)", at, name)
		}
	}
	for _, r := range []struct {
		key string
		m   map[string]string
	}{{"resources.requests", a.Requests}, {"resources.limits", a.Limits}} {
		for name, q := range r.m {
			if !slices.Contains(agentResources, name) {
				add("%s%s has %q; a sandbox may ask for %s", at, r.key, name, strings.Join(agentResources, ", "))
				continue
			}
			if v, err := resource.ParseQuantity(q); err != nil {
				add("%s%s.%s is %q, which is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi)", at, r.key, name, q)
			} else if v.Sign() < 0 {
				add("%s%s.%s is %q; a quantity the API server accepts is not negative (e.g. 500m, 2, 512Mi, 4Gi)", at, r.key, name, q)
			}
		}
	}
	for name, lim := range a.Limits {
		req, hasReq := a.Requests[name]
		l, errL := resource.ParseQuantity(lim)
		q, errQ := resource.ParseQuantity(req)
		if hasReq && errL == nil && errQ == nil && q.Cmp(l) > 0 {
			add("%sresources.requests.%s (%s) is above resources.limits.%s (%s); the API server rejects that, so lower the request or raise the limit", at, name, req, name, lim)
		}
	}
	if a.WorkingDir != "" && !strings.HasPrefix(a.WorkingDir, "/") {
		add("%sworkingDir %q must be an absolute path", at, a.WorkingDir)
	}
	if a.ScratchMountPath != "" && (!strings.HasPrefix(a.ScratchMountPath, "/") || a.ScratchMountPath == "/") {
		add("%sscratch.mountPath %q must be an absolute path other than /", at, a.ScratchMountPath)
	}
	if a.ScratchSizeLimit != "" {
		if a.ScratchMountPath == "" {
			add("%sscratch.sizeLimit is set without scratch.mountPath; say where the scratch volume goes", at)
		}
		if v, err := resource.ParseQuantity(a.ScratchSizeLimit); err != nil {
			add("%sscratch.sizeLimit is %q, which is not a Kubernetes quantity (e.g. 1Gi)", at, a.ScratchSizeLimit)
		} else if v.Sign() <= 0 {
			add("%sscratch.sizeLimit is %q; give a positive size (e.g. 1Gi), or remove the key for a volume bounded only by the node", at, a.ScratchSizeLimit)
		}
	}
	for _, v := range podSecurityViolations(a) {
		add("%s would be rejected by the namespace's Pod Security level (restricted): %s", strings.TrimSuffix(at, "."), v)
	}
}

// podSecurityViolations renders the sandbox pod the program would create for a and evaluates it
// with the Pod Security admission library the API server runs, at the version the namespace pins.
func podSecurityViolations(a components.Agent) []string {
	b, err := json.Marshal(components.SandboxPodTemplate(a, contract.RuntimeClassName))
	if err != nil {
		return []string{err.Error()}
	}
	var tpl corev1.PodTemplateSpec
	if err := json.Unmarshal(b, &tpl); err != nil {
		return []string{fmt.Sprintf("the pod does not decode as a Kubernetes pod (%v)", err)}
	}
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		return []string{err.Error()}
	}
	version, err := psaapi.ParseVersion(components.PodSecurityVersion)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, r := range evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: version}, &tpl.ObjectMeta, &tpl.Spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return out
}

// maxPodsPerNode bounds sandboxesPerNode: EKS Auto Mode's pods per node (110, Kubernetes'
// default as well).
const maxPodsPerNode = 110

// warmHitTarget is a share written as a decimal: 0.9, 0.99, 0.995.
var warmHitTarget = regexp.MustCompile(`^0\.[0-9]{1,4}$`)

// validateSizing checks the sizing policy's parameters.
func validateSizing(p *Pool, add func(string, ...any)) {
	s := p.Sizing
	switch s.Policy {
	case components.SizingClaims:
		// The node keys shape the arrivals formula only; under claims they would do nothing.
		for _, k := range []struct {
			key string
			set bool
		}{{"nodeLaunchSeconds", s.NodeLaunchSeconds != 0}, {"sandboxesPerNode", s.SandboxesPerNode != 1}, {"schedule", len(s.Schedule) > 0}} {
			if k.set {
				add("sizing.%s is set with sizing.policy=%s, which does not read it; set sizing.policy to %s, or remove it", k.key, s.Policy, components.SizingArrivals)
			}
		}
		return
	case components.SizingArrivals:
	default:
		add("sizing.policy is %q; it must be one of %s (warm sandboxes per claim held, the blueprint's) or %s (sized by the claims that arrive while a taken sandbox is replaced)", s.Policy, components.SizingClaims, components.SizingArrivals)
		return
	}
	if s.BootSeconds < 1 || s.BootSeconds > 600 {
		add("sizing.bootSeconds is %d; set the seconds a new sandbox takes from creation to Ready on your nodes (1..600)", s.BootSeconds)
	}
	if s.HPASyncSeconds < 1 || s.HPASyncSeconds > 300 {
		add("sizing.hpaSyncSeconds is %d; set the HPA controller's sync period (15 on EKS), 1..300", s.HPASyncSeconds)
	}
	if s.WarmHitTarget < 0.5 || s.WarmHitTarget >= 1 {
		add("sizing.warmHitTarget is %v; it must be at least 0.5 and below 1 (1 would need an infinite pool), e.g. 0.99", s.WarmHitTarget)
	}
	if s.ShortWindowSeconds < s.HPASyncSeconds || s.ShortWindowSeconds > 3600 {
		add("sizing.shortWindowSeconds is %d; it must be at least sizing.hpaSyncSeconds (%d: the HPA reads the counts once a sync, so a shorter window can let a claim arrive and leave it between two reads) and at most 3600", s.ShortWindowSeconds, s.HPASyncSeconds)
	}
	if s.LongWindowSeconds <= s.ShortWindowSeconds || s.LongWindowSeconds > 3600 {
		add("sizing.longWindowSeconds is %d; it must be above shortWindowSeconds (%d) and at most 3600", s.LongWindowSeconds, s.ShortWindowSeconds)
	}
	if s.NodeLaunchSeconds < 0 || s.NodeLaunchSeconds > 900 {
		add("sizing.nodeLaunchSeconds is %d; set the seconds a new node takes from launch to Ready on your cluster (0 when nodes are always there, about 30 on EKS Auto Mode), 0..900", s.NodeLaunchSeconds)
	}
	if s.SandboxesPerNode < 1 || s.SandboxesPerNode > maxPodsPerNode {
		add("sizing.sandboxesPerNode is %d; set how many sandboxes fit on one node (1 rounds nothing), 1..%d", s.SandboxesPerNode, maxPodsPerNode)
	}
	if len(s.Schedule) > schedule.MaxWindows {
		add("sizing.schedule has %d windows; at most %d (one per hour of the day)", len(s.Schedule), schedule.MaxWindows)
	}
	for i, w := range s.Schedule {
		if err := w.Check(); err != nil {
			add("sizing.schedule[%d]: %v", i, err)
		}
		if w.Warm < 1 || w.Warm > p.MaxReplicas {
			add("sizing.schedule[%d].warm is %d; set the warm sandboxes the window keeps at least, 1..maxReplicas (%d)", i, w.Warm, p.MaxReplicas)
		}
	}
	if p.TargetValue != contract.DefaultTargetValue {
		add("targetValue is %q with sizing.policy=arrivals, which does not read it (it sizes by arrivals, not claims per sandbox); remove it", p.TargetValue)
	}
}
