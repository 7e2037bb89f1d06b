// Package monitoring renders the stack's Prometheus alerting rules: the one source for the
// PrometheusRule the program creates (components.Monitoring) and for the rule file
// `promtool test rules` checks (e2e/monitoring/promtool_live_test.go). It imports nothing of
// Pulumi.
package monitoring

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// The metrics the rules read, as the pinned upstreams name them.
//
// KEDA v2.21.0 (pkg/metricscollector/prommetrics.go), served by the operator:
//   - keda_scaler_detail_errors_total{namespace, metric, scaledObject, scaler, triggerIndex, type}
//   - keda_scaled_object_errors_total{namespace, scaledObject}
//   - keda_scaler_http_requests_total{namespace, scaled_resource, scaler, trigger_name, metric_name,
//     status_code}: every request a scaler sends while collecting a metric (the metrics-api scaler's
//     client is util.CreateHTTPClient, whose transport is InstrumentedRoundTripper), with the
//     HTTP status, or "error" for a transport failure (http_roundtripper.go).
//
// KEDA 2.21 has no metric for the fallback: the Fallback condition lives only in the
// ScaledObject's status. Worse, once the fallback takes over the errors stop being counted:
// fallback.GetMetricsWithFallback returns the fallback's metrics with a nil error once
// NumberOfFailures exceeds failureThreshold, and scale_handler.go records that nil as the
// scaler's error (RecordScalerError only initialises the series then). So
// keda_scaler_detail_errors_total rises by about failureThreshold and then stays flat for the
// whole of a long outage. The frozen rule therefore also reads the share of the scaler's HTTP
// requests that failed, which keeps counting while the fallback holds the pool.
//
// agent-sandbox v0.5.6 (internal/metrics/metrics.go), served by its controller (:8080):
//   - agent_sandbox_claim_creation_total{namespace, sandbox_template, launch_type, warmpool_name,
//     pod_condition, created_by}: launch_type "warm" when a claim adopted a warm sandbox, "cold"
//     when the controller had to create one (sandboxclaim_controller.go); warmpool_name is the
//     claim's spec.warmPoolRef.name. The same labels at the newest commit of its repository
//     (August 2026); the v1.0.10 release the program installs is neither tagged there nor on
//     the module proxy, so it could not be read.
//
// agent-sandbox's controller Service (k8s/controller.yaml at v0.5.6): agent-sandbox-controller in
// agent-sandbox-system, port "metrics" (8080, plain HTTP /metrics), so its targets' job is
// agent-sandbox-controller. The KEDA chart's Services (kedacore/charts keda/templates, 2.20.2):
// keda-operator and keda-operator-metrics-apiserver in keda, each with a port "metrics" its
// ServiceMonitor scrapes, so those are their jobs (no jobLabel is set).
//
// kube-state-metrics v2.20 (internal/store/horizontalpodautoscaler.go, pod.go), as
// kube-prometheus-stack scrapes it (honorLabels: the object's namespace stays `namespace`):
//   - kube_horizontalpodautoscaler_spec_max_replicas{namespace, horizontalpodautoscaler}
//   - kube_horizontalpodautoscaler_status_desired_replicas{namespace, horizontalpodautoscaler}
//   - kube_pod_status_unschedulable{namespace, pod, uid}: 1 while PodScheduled is False with
//     reason Unschedulable (no node fits, none launched yet)
//   - kube_pod_created{namespace, pod, uid}: the pod's creation time, Unix seconds
//
// The exporter (exporter/server.go): warmpool_exporter_refused_pools,
// warmpool_active_claims_fresh{pool, namespace} (0 while a pool's reads fail and it serves the last
// good count with a 200, which KEDA takes as a reading: no scaler error, no fallback), and the
// scrape's own up. Its ServiceMonitor has no honorLabels, so a series carries the exporter's job
// and namespace, and the pool's namespace as exported_namespace.
const (
	metricScalerErrors    = "keda_scaler_detail_errors_total"
	metricScalerRequests  = "keda_scaler_http_requests_total"
	metricClaimsCreated   = "agent_sandbox_claim_creation_total"
	metricRefusedPools    = "warmpool_exporter_refused_pools"
	metricCountFresh      = "warmpool_active_claims_fresh"
	metricHPAMax          = "kube_horizontalpodautoscaler_spec_max_replicas"
	metricHPADesired      = "kube_horizontalpodautoscaler_status_desired_replicas"
	metricUnschedulable   = "kube_pod_status_unschedulable"
	metricPodCreated      = "kube_pod_created"
	hpaLabel              = "horizontalpodautoscaler"
	ksmNamespaceLabel     = "namespace" // kube-state-metrics scraped with honorLabels
	exporterPoolLabel     = "pool"
	metricUp              = "up"
	launchTypeLabel       = "launch_type"
	launchTypeCold        = "cold"
	warmPoolNameLabel     = "warmpool_name"
	scaledObjectLabel     = "scaledObject"    // keda_scaler_detail_errors_total
	scaledResourceLabel   = "scaled_resource" // keda_scaler_http_requests_total
	statusCodeLabel       = "status_code"
	exporterTargetNSLabel = "namespace" // the exporter's own target: no label of its own clashes
)

// FrozenWindow is the range the frozen rule reads KEDA's counters over: long enough to hold
// failureThreshold errors and a few requests at a 15 s polling interval and a 30-60 s scrape.
const FrozenWindow = "5m"

// Alert names.
const (
	AlertPoolFrozen       = "WarmPoolFrozen"
	AlertColdLaunches     = "WarmPoolColdLaunchesHigh"
	AlertExporterDown     = "ClaimExporterDown"
	AlertExporterRefusing = "ClaimExporterRefusedPools"
	AlertCountStale       = "WarmPoolCountStale"
	AlertKedaUnseen       = "WarmPoolKedaUnseen"
	AlertPinnedAtMax      = "WarmPoolPinnedAtMax"
	AlertHPAUnseen        = "WarmPoolHPAUnseen"
	AlertUnschedulable    = "WarmPoolSandboxesUnschedulable"
	AlertKedaOperatorDown = "KedaOperatorDown"
	AlertKedaMetricsDown  = "KedaMetricsServerDown"
	AlertAgentSandboxDown = "AgentSandboxControllerDown"
)

// The jobs and namespaces of the controllers the stack installs, as their Services name them.
const (
	KedaOperatorJob      = "keda-operator"
	KedaMetricsServerJob = "keda-operator-metrics-apiserver"
	AgentSandboxJob      = contract.AgentSandboxControllerService
)

// DefaultRunbookURL is where the alerts' runbook_url points unless the stack names its own copy:
// the runbook's path in this repository. A team that hosts the runbook (its wiki, its fork) sets
// monitoring.runbookURL, and each alert links to its section there.
const DefaultRunbookURL = "docs/runbook.md"

// RunbookAnchor is an alert's section in the runbook: the anchor of a heading that is the alert's
// name.
func RunbookAnchor(alert string) string { return strings.ToLower(alert) }

// UnseenFor is how long the series a rule reads may be missing before the rule that says so
// (WarmPoolKedaUnseen, WarmPoolHPAUnseen) fires: KEDA polls every 15 s and kube-state-metrics
// serves every HPA at each scrape, so a scraped source shows one within a minute; ten minutes
// rides out a Prometheus, KEDA or kube-state-metrics restart.
const UnseenFor = "10m"

// PinnedWindow is the range WarmPoolPinnedAtMax counts cold launches over: the pool at its
// ceiling is news only while claims find no warm sandbox.
const PinnedWindow = "5m"

// UnschedulableGrace is how long WarmPoolSandboxesUnschedulable lets its condition hold before
// firing: the condition already asks each pod to have waited unschedulableFor, so this only rides
// out a scrape's jitter.
const UnschedulableGrace = "1m"

// Pool is one warm pool the rules watch.
type Pool struct {
	Name         string // the SandboxWarmPool (agent-sandbox's warmpool_name)
	Namespace    string // where its claims, its sandboxes and its ScaledObject live
	ScaledObject string // the ScaledObject's name
	HPA          string // the HPA KEDA makes for the ScaledObject (keda-hpa-<name>)
	// ExporterPool is the pool label the exporter gives this pool's series: the pool's name when
	// it serves a list of pools (EXPORTER_POOLS), "" when it counts the stack's one pool from its
	// namespace and selector and labels no pool (a PromQL matcher pool="" selects series without
	// the label).
	ExporterPool string
}

// Controller is one controller of the loop the stack installs and scrapes: a rule fires when no
// target of its job is up.
type Controller struct {
	Alert     string
	Job       string
	Namespace string
	// What is the controller, as a sentence names it; Effect, what its absence does to the pools.
	What, Effect string
}

// Thresholds are the rules' settings (monitoring.* in the stack config). Durations are
// Prometheus durations: a whole number and one unit, s, m or h.
type Thresholds struct {
	// FrozenFor: how long the read path must look broken before WarmPoolFrozen fires, and an
	// exporter replica serve a pool's last good count before WarmPoolCountStale does.
	FrozenFor string
	// ReadFailureRatio: the share of KEDA's requests to the exporter that failed over
	// FrozenWindow at which the read path counts as broken (0 < r <= 1).
	ReadFailureRatio float64
	// ColdRatio: the share of a pool's claims that had to wait for a cold sandbox over ColdWindow
	// at which WarmPoolColdLaunchesHigh fires (0 < r < 1); only once ColdMinClaims claims came.
	ColdRatio     float64
	ColdWindow    string
	ColdMinClaims int
	ColdFor       string
	// ExporterDownFor: no exporter target up for this long.
	ExporterDownFor string
	// RefusedPoolsFor: the exporter refusing an entry for this long.
	RefusedPoolsFor string
	// PinnedFor: the HPA asking for at least maxReplicas while claims launch cold, this long.
	PinnedFor string
	// UnschedulableFor: a pod of the pool's namespace unschedulable this long after its creation.
	UnschedulableFor string
	// ControllerDownFor: no target of an installed controller's job up for this long.
	ControllerDownFor string
}

// DefaultThresholds are the defaults docs/configuration.md justifies.
func DefaultThresholds() Thresholds {
	return Thresholds{
		FrozenFor: "2m", ReadFailureRatio: 0.5,
		ColdRatio: 0.25, ColdWindow: "30m", ColdMinClaims: 20, ColdFor: "5m",
		ExporterDownFor: "2m", RefusedPoolsFor: "5m",
		PinnedFor: "5m", UnschedulableFor: "5m", ControllerDownFor: "2m",
	}
}

// Spec is everything the rules depend on.
type Spec struct {
	Pools []Pool
	// ExporterNamespace and ExporterJob select the exporter's scrape targets: the namespace of its
	// Service and the job the ServiceMonitor gives them (the Service's name).
	ExporterNamespace string
	ExporterJob       string
	// NamespaceLabel is the label holding KEDA's and agent-sandbox's own namespace label after
	// the scrape: exported_namespace when they are scraped without honorLabels (the KEDA chart's
	// ServiceMonitor, the Prometheus Operator's default), namespace with honorLabels.
	NamespaceLabel string
	// FallbackFailureThreshold is the ScaledObjects' fallback.failureThreshold: that many scaler
	// errors within FrozenWindow is a fallback taking over.
	FallbackFailureThreshold int
	// RunbookURL is the runbook each alert's runbook_url points into (DefaultRunbookURL when empty).
	RunbookURL string
	// Controllers are the controllers the stack installs and scrapes (install mode); adopted ones
	// are the adopter's to watch.
	Controllers []Controller
	Thresholds
}

// RuleFile is a Prometheus rule file; its groups are also a PrometheusRule's spec.groups.
type RuleFile struct {
	Groups []Group `json:"groups"`
}

// Group is a rule group.
type Group struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is an alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// YAML is the rule file as promtool and Prometheus read it.
func (f RuleFile) YAML() ([]byte, error) { return yaml.Marshal(f) }

// PoolGroupName and ExporterGroupName name the groups: one per pool, one for the exporter.
func PoolGroupName(pool string) string { return "warmpool.pool." + pool }

// ExporterGroupName is the exporter's group; ControllersGroupName the installed controllers'.
const (
	ExporterGroupName    = "warmpool.exporter"
	ControllersGroupName = "warmpool.controllers"
)

// Rules renders the alerting rules: a group per pool (frozen, cold launches, a stale count, KEDA
// unseen, pinned at maxReplicas, its HPA unseen, pods no node takes), one for the exporter that
// serves them all (down, refusing an entry), and one for the controllers the stack installs.
func Rules(s Spec) RuleFile {
	var f RuleFile
	for _, p := range s.Pools {
		f.Groups = append(f.Groups, Group{Name: PoolGroupName(p.Name), Rules: []Rule{frozenRule(s, p), coldRule(s, p), staleRule(s, p), kedaUnseenRule(s, p),
			pinnedRule(s, p), hpaUnseenRule(p), unschedulableRule(s, p)}})
	}
	exporter := selector(map[string]string{"job": s.ExporterJob, exporterTargetNSLabel: s.ExporterNamespace})
	f.Groups = append(f.Groups, Group{Name: ExporterGroupName, Rules: []Rule{
		{
			Alert: AlertExporterDown,
			// No target up: every replica down, unready or gone from the Service. KEDA then
			// reads nothing for any pool, and every pool holds its size on the fallback.
			Expr:   fmt.Sprintf("absent(%s%s == 1)", metricUp, exporter),
			For:    s.ExporterDownFor,
			Labels: map[string]string{"severity": "critical", "namespace": s.ExporterNamespace},
			Annotations: map[string]string{
				"summary": "No claim exporter replica answers its scrape",
				"description": fmt.Sprintf("No target of job %s in namespace %s has been up for %s: KEDA cannot read any pool's demand, "+
					"so every pool holds its size and stops following demand. Check the claim-exporter pods and the Service's endpoints.", s.ExporterJob, s.ExporterNamespace, s.ExporterDownFor),
			},
		},
		{
			Alert:  AlertExporterRefusing,
			Expr:   fmt.Sprintf("max(%s%s) > 0", metricRefusedPools, exporter),
			For:    s.RefusedPoolsFor,
			Labels: map[string]string{"severity": "warning", "namespace": s.ExporterNamespace},
			Annotations: map[string]string{
				"summary": "The claim exporter refuses a pool entry",
				"description": "The exporter refuses entries of EXPORTER_POOLS and does not serve them: their ScaledObjects fall back. " +
					"warmpool_exporter_refused_pool_info and /healthz name them, its log says why.",
			},
		},
	}})
	if len(s.Controllers) > 0 {
		g := Group{Name: ControllersGroupName}
		for _, c := range s.Controllers {
			g.Rules = append(g.Rules, controllerDownRule(s, c))
		}
		f.Groups = append(f.Groups, g)
	}
	runbook := s.RunbookURL
	if runbook == "" {
		runbook = DefaultRunbookURL
	}
	for gi := range f.Groups {
		for ri := range f.Groups[gi].Rules {
			r := &f.Groups[gi].Rules[ri]
			r.Annotations["runbook_url"] = runbook + "#" + RunbookAnchor(r.Alert)
		}
	}
	return f
}

// frozenRule: KEDA counted failureThreshold errors within FrozenWindow (its fallback is taking
// over, or the scaler errors without an HTTP failure, e.g. a 200 without the count), or at least
// ReadFailureRatio of its requests to the exporter failed. The first branch alone would resolve a
// few minutes into an outage (the errors stop once the fallback holds; promtool shows it at the
// 15 and 35 minute evaluations when the second branch is cut); the second keeps it firing.
func frozenRule(s Spec, p Pool) Rule {
	errs := selector(map[string]string{s.NamespaceLabel: p.Namespace, scaledObjectLabel: p.ScaledObject})
	reqs := selector(map[string]string{s.NamespaceLabel: p.Namespace, scaledResourceLabel: p.ScaledObject})
	failed := strings.TrimSuffix(reqs, "}") + fmt.Sprintf(`,%s!~"2.."}`, statusCodeLabel)
	expr := fmt.Sprintf("(sum(increase(%s%s[%s])) >= %d)\nor\n(sum(rate(%s%s[%s])) / sum(rate(%s%s[%s])) >= %s)",
		metricScalerErrors, errs, FrozenWindow, s.FallbackFailureThreshold,
		metricScalerRequests, failed, FrozenWindow, metricScalerRequests, reqs, FrozenWindow, num(s.ReadFailureRatio))
	return Rule{
		Alert: AlertPoolFrozen, Expr: expr, For: s.FrozenFor,
		Labels: poolLabels(p, "critical"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s is frozen: KEDA cannot read its demand", p.Namespace, p.Name),
			"description": fmt.Sprintf("KEDA counted at least %d scaler errors in %s (its fallback takes over at that many), or at least %s of its requests "+
				"to the exporter failed, for ScaledObject %s/%s. The pool holds its size but no longer follows demand: "+
				"kubectl get scaledobject -n %s %s shows the Fallback condition and the triggers' health.",
				s.FallbackFailureThreshold, FrozenWindow, percent(s.ReadFailureRatio), p.Namespace, p.ScaledObject, p.Namespace, p.ScaledObject),
		},
	}
}

// staleRule: an exporter replica has served the pool's last good count for FrozenFor (its reads of
// the API fail: a Role deleted, the API unreachable). It still answers 200 with a count, so KEDA
// counts no error and WarmPoolFrozen stays silent while the pool holds a size from the past. Any
// replica, not all: KEDA reads through the Service, so a stale replica answers its share of reads.
func staleRule(s Spec, p Pool) Rule {
	fresh := selector(map[string]string{"job": s.ExporterJob, exporterTargetNSLabel: s.ExporterNamespace, exporterPoolLabel: p.ExporterPool})
	return Rule{
		Alert: AlertCountStale, Expr: fmt.Sprintf("min(%s%s) == 0", metricCountFresh, fresh), For: s.FrozenFor,
		Labels: poolLabels(p, "critical"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s follows a stale count: the exporter cannot read its claims", p.Namespace, p.Name),
			"description": fmt.Sprintf("A claim exporter replica of job %s in namespace %s has served pool %s's last good count for %s "+
				"(warmpool_active_claims_fresh 0): its reads of the Kubernetes API fail, yet it answers KEDA with a count, so KEDA sees no error "+
				"and the pool holds a size from the past. The exporter's log and warmpool_active_claims_read_timestamp_seconds say since when; "+
				"check its ServiceAccount's Role and the API server.", s.ExporterJob, s.ExporterNamespace, p.Name, s.FrozenFor),
		},
	}
}

// kedaUnseenRule: Prometheus holds no series of KEDA's requests for the pool's ScaledObject. KEDA
// sends them every polling interval whatever the demand, so their absence means KEDA's operator is
// not scraped (its ServiceMonitor missing or unselected, honorLabels not as namespaceLabel says),
// down, or not polling this ScaledObject: WarmPoolFrozen reads these series and could never fire.
// Silence is then an alert, not health.
func kedaUnseenRule(s Spec, p Pool) Rule {
	reqs := selector(map[string]string{s.NamespaceLabel: p.Namespace, scaledResourceLabel: p.ScaledObject})
	return Rule{
		// Summed, so the alert carries the rule's labels only, not the matchers absent() would copy.
		Alert: AlertKedaUnseen, Expr: fmt.Sprintf("absent(sum(%s%s))", metricScalerRequests, reqs), For: UnseenFor,
		Labels: poolLabels(p, "warning"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s: no KEDA metrics for its ScaledObject, so WarmPoolFrozen cannot fire", p.Namespace, p.Name),
			"description": fmt.Sprintf("Prometheus has held no %s series with %s=%q and %s=%q for %s. KEDA sends these requests every polling "+
				"interval, so its operator is not scraped (keda.serviceMonitor, its labels for the Prometheus' selector, monitoring.namespaceLabel), "+
				"down, or not polling ScaledObject %s/%s. Until they are back, a frozen pool pages no one.",
				metricScalerRequests, s.NamespaceLabel, p.Namespace, scaledResourceLabel, p.ScaledObject, UnseenFor, p.Namespace, p.ScaledObject),
		},
	}
}

// pinnedRule: the HPA asks for at least maxReplicas (the formula wants more than the ceiling
// allows) and claims found no warm sandbox in the last PinnedWindow. A burst that touches the
// ceiling while the pool still serves every claim warm is the ceiling working; claims going cold
// at the ceiling is the ceiling too low (or a runaway demand reading).
func pinnedRule(s Spec, p Pool) Rule {
	hpa := selector(map[string]string{ksmNamespaceLabel: p.Namespace, hpaLabel: p.HPA})
	cold := selector(map[string]string{s.NamespaceLabel: p.Namespace, warmPoolNameLabel: p.Name, launchTypeLabel: launchTypeCold})
	expr := fmt.Sprintf("(max(%s%s) >= max(%s%s))\nand\n(sum(increase(%s%s[%s])) > 0)",
		metricHPADesired, hpa, metricHPAMax, hpa, metricClaimsCreated, cold, PinnedWindow)
	return Rule{
		Alert: AlertPinnedAtMax, Expr: expr, For: s.PinnedFor,
		Labels: poolLabels(p, "warning"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s is pinned at maxReplicas while claims launch cold", p.Namespace, p.Name),
			"description": fmt.Sprintf("HPA %s/%s has asked for at least its maxReplicas for %s and claims on pool %s found no warm sandbox in the last %s: "+
				"demand is above the ceiling. Raise maxReplicas (or loadCap) if the demand is real; if the count is not, check the exporter's reading.",
				p.Namespace, p.HPA, s.PinnedFor, p.Name, PinnedWindow),
		},
	}
}

// hpaUnseenRule: Prometheus holds no kube-state-metrics series of the pool's HPA, so
// WarmPoolPinnedAtMax (and WarmPoolSandboxesUnschedulable, from the same source) cannot fire.
func hpaUnseenRule(p Pool) Rule {
	hpa := selector(map[string]string{ksmNamespaceLabel: p.Namespace, hpaLabel: p.HPA})
	return Rule{
		Alert: AlertHPAUnseen, Expr: fmt.Sprintf("absent(sum(%s%s))", metricHPAMax, hpa), For: UnseenFor,
		Labels: poolLabels(p, "warning"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s: no kube-state-metrics series of its HPA, so WarmPoolPinnedAtMax cannot fire", p.Namespace, p.Name),
			"description": fmt.Sprintf("Prometheus has held no %s%s for %s. kube-state-metrics serves every HPA at each scrape, so it is not scraped "+
				"(or not with honorLabels, which keeps the HPA's namespace in `namespace`), down, or KEDA has not made HPA %s for ScaledObject %s. "+
				"Until it is back, a pool pinned at its ceiling or sandboxes no node takes page no one.",
				metricHPAMax, hpa, UnseenFor, p.HPA, p.ScaledObject),
		},
	}
}

// unschedulableRule: a pod of the pool's namespace is still unschedulable UnschedulableFor after
// its creation: no node fits it and none was launched for it (a NodePool's limits reached, no
// capacity of the instance types it allows, the runtime class's node selector matching no node).
// Each pod's own age, not the condition's duration: under steady bursts some pod always waits the
// minute a node launch takes, and that is not an alert.
func unschedulableRule(s Spec, p Pool) Rule {
	ns := selector(map[string]string{ksmNamespaceLabel: p.Namespace})
	after, _ := ParseDuration(s.UnschedulableFor)
	expr := fmt.Sprintf("count((%s%s == 1)\nand on(namespace, pod)\n(time() - %s%s > %d)) > 0",
		metricUnschedulable, ns, metricPodCreated, ns, int(after.Seconds()))
	return Rule{
		Alert: AlertUnschedulable, Expr: expr, For: UnschedulableGrace,
		Labels: poolLabels(p, "critical"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Pods in %s have waited more than %s for a node: warm pool %s cannot refill", p.Namespace, s.UnschedulableFor, p.Name),
			"description": fmt.Sprintf("Pods in namespace %s are unschedulable %s or more after their creation: no node fits them and none "+
				"is being launched. Warm sandboxes that never start leave claims cold. Check the pods' events and the NodePool's limits "+
				"(kubectl get events -n %s --field-selector reason=FailedScheduling).", p.Namespace, s.UnschedulableFor, p.Namespace),
		},
	}
}

// controllerDownRule: no target of an installed controller's job is up.
func controllerDownRule(s Spec, c Controller) Rule {
	up := selector(map[string]string{"job": c.Job, exporterTargetNSLabel: c.Namespace})
	return Rule{
		Alert: c.Alert, Expr: fmt.Sprintf("absent(%s%s == 1)", metricUp, up), For: s.ControllerDownFor,
		Labels: map[string]string{"severity": "critical", "namespace": c.Namespace},
		Annotations: map[string]string{
			"summary":     fmt.Sprintf("%s is down: no target of job %s is up", c.What, c.Job),
			"description": fmt.Sprintf("No target of job %s in namespace %s has been up for %s. %s", c.Job, c.Namespace, s.ControllerDownFor, c.Effect),
		},
	}
}

// InstalledControllers are the loop's controllers as the stack installs them, for Spec.Controllers:
// KEDA's operator and metrics server (with KEDA's ServiceMonitors) and agent-sandbox's controller.
func InstalledControllers(keda, agentSandbox bool) []Controller {
	var cs []Controller
	if keda {
		cs = append(cs,
			Controller{Alert: AlertKedaOperatorDown, Job: KedaOperatorJob, Namespace: contract.KedaNamespace, What: "KEDA's operator",
				Effect: "No ScaledObject is polled: the pools hold their size and stop following demand, and WarmPoolFrozen cannot fire (KEDA's own metrics are gone)."},
			Controller{Alert: AlertKedaMetricsDown, Job: KedaMetricsServerJob, Namespace: contract.KedaNamespace, What: "KEDA's metrics server",
				Effect: "The HPAs cannot read their metric (external.metrics.k8s.io): the pools hold their size and stop following demand."},
		)
	}
	if agentSandbox {
		cs = append(cs, Controller{Alert: AlertAgentSandboxDown, Job: AgentSandboxJob, Namespace: contract.AgentSandboxNamespace, What: "agent-sandbox's controller",
			Effect: "No claim is bound to a sandbox and no warm pool refills: every claim waits until it is back."})
	}
	return cs
}

func coldRule(s Spec, p Pool) Rule {
	all := selector(map[string]string{s.NamespaceLabel: p.Namespace, warmPoolNameLabel: p.Name})
	cold := strings.TrimSuffix(all, "}") + fmt.Sprintf(`,%s=%q}`, launchTypeLabel, launchTypeCold)
	total := fmt.Sprintf("sum(increase(%s%s[%s]))", metricClaimsCreated, all, s.ColdWindow)
	expr := fmt.Sprintf("(sum(increase(%s%s[%s])) / %s > %s)\nand\n(%s >= %d)",
		metricClaimsCreated, cold, s.ColdWindow, total, num(s.ColdRatio), total, s.ColdMinClaims)
	return Rule{
		Alert: AlertColdLaunches, Expr: expr, For: s.ColdFor,
		Labels: poolLabels(p, "warning"),
		Annotations: map[string]string{
			"summary": fmt.Sprintf("Warm pool %s/%s: more than %s of claims waited for a cold sandbox", p.Namespace, p.Name, percent(s.ColdRatio)),
			"description": fmt.Sprintf("More than %s of the claims (and at least %d) on pool %s in the last %s found no warm sandbox (launch_type=cold). "+
				"The pool is too small for its bursts (maxReplicas, headroom, sizing), frozen, or slow to refill.", percent(s.ColdRatio), s.ColdMinClaims, p.Name, s.ColdWindow),
		},
	}
}

// poolLabels are a pool alert's labels: its severity, the pool and its namespace.
func poolLabels(p Pool, severity string) map[string]string {
	return map[string]string{"severity": severity, "pool": p.Name, "namespace": p.Namespace}
}

// selector renders {k="v",...} in key order.
func selector(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func num(f float64) string     { return strconv.FormatFloat(f, 'f', -1, 64) }
func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

// duration is a Prometheus duration the rules accept: a whole number and one unit.
var duration = regexp.MustCompile(`^([1-9][0-9]*)(s|m|h)$`)

// ParseDuration reads a rule duration ("90s", "5m", "1h"); ok is false for anything else.
func ParseDuration(s string) (time.Duration, bool) {
	m := duration.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false
	}
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[m[2]]
	return time.Duration(n) * unit, true
}
