package program

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
)

// Monitoring is the `monitoring` key: the exporter's ServiceMonitor and the stack's alerting
// rules, both off by default (they need the Prometheus Operator).
type Monitoring struct {
	ServiceMonitor bool
	Rules          bool
	ScrapeInterval string
	NamespaceLabel string
	Labels         map[string]string
	// RunbookURL is where the alerts' runbook_url annotations point (monitoring.DefaultRunbookURL).
	RunbookURL string
	Thresholds monitoring.Thresholds
	// set are the keys the stack set, so a key that would do nothing can be refused.
	set map[string]bool
}

// Defaults of the monitoring keys beside the thresholds (monitoring.DefaultThresholds).
const (
	// defaultScrapeInterval: each scrape of /metrics reads every pool from the API server
	// (exporter/README.md), so a scrape every 30 s by each of two replicas' targets is 4 reads
	// per pool a minute beside KEDA's 4 a trigger.
	defaultScrapeInterval = "30s"
	// defaultNamespaceLabel is where a ServiceMonitor or PodMonitor without honorLabels (the KEDA
	// chart's, the Prometheus Operator's default) leaves KEDA's and agent-sandbox's own namespace label.
	defaultNamespaceLabel = "exported_namespace"
	minScrapeInterval     = 10 * time.Second
	maxScrapeInterval     = 5 * time.Minute
)

// monitoringThresholdKeys are the rule settings: only with rules.
var monitoringThresholdKeys = []string{"namespaceLabel", "runbookURL", "frozenFor", "readFailureRatio", "coldLaunchRatio", "coldLaunchWindow", "coldLaunchMinClaims", "coldLaunchFor", "exporterDownFor", "refusedPoolsFor",
	"pinnedAtMaxFor", "unschedulableFor", "controllerDownFor"}

// readMonitoring reads the `monitoring` object.
func readMonitoring(o configObject) Monitoring {
	def := monitoring.DefaultThresholds()
	m := Monitoring{
		ServiceMonitor: o.boolean("serviceMonitor", false),
		Rules:          o.boolean("rules", false),
		ScrapeInterval: o.str("scrapeInterval", defaultScrapeInterval),
		NamespaceLabel: o.str("namespaceLabel", defaultNamespaceLabel),
		Labels:         o.stringMap("labels"),
		RunbookURL:     o.str("runbookURL", monitoring.DefaultRunbookURL),
		set:            map[string]bool{},
	}
	for k, v := range o.m {
		if v != nil {
			m.set[k] = true
		}
	}
	ratio := func(key string, d float64) float64 {
		s := o.str(key, strconv.FormatFloat(d, 'f', -1, 64))
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !decimal.MatchString(s) {
			o.fail("monitoring.%s is %q; write a share as a decimal such as %s", key, s, strconv.FormatFloat(d, 'f', -1, 64))
			return d
		}
		return v
	}
	m.Thresholds = monitoring.Thresholds{
		FrozenFor:         o.str("frozenFor", def.FrozenFor),
		ReadFailureRatio:  ratio("readFailureRatio", def.ReadFailureRatio),
		ColdRatio:         ratio("coldLaunchRatio", def.ColdRatio),
		ColdWindow:        o.str("coldLaunchWindow", def.ColdWindow),
		ColdMinClaims:     o.integer("coldLaunchMinClaims", def.ColdMinClaims),
		ColdFor:           o.str("coldLaunchFor", def.ColdFor),
		ExporterDownFor:   o.str("exporterDownFor", def.ExporterDownFor),
		RefusedPoolsFor:   o.str("refusedPoolsFor", def.RefusedPoolsFor),
		PinnedFor:         o.str("pinnedAtMaxFor", def.PinnedFor),
		UnschedulableFor:  o.str("unschedulableFor", def.UnschedulableFor),
		ControllerDownFor: o.str("controllerDownFor", def.ControllerDownFor),
	}
	o.done(o.keysRead())
	return m
}

var (
	decimal = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	// promLabelName is a Prometheus label name; "__" names are Prometheus' own.
	promLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// on reports whether the stack creates any monitoring object.
func (m Monitoring) on() bool { return m.ServiceMonitor || m.Rules }

// validateMonitoring checks the monitoring keys; each message names the key.
func validateMonitoring(m Monitoring, add func(string, ...any)) {
	if m.Rules && !m.ServiceMonitor {
		add("monitoring.rules is true but monitoring.serviceMonitor is not: the ClaimExporterDown rule reads the targets the stack's ServiceMonitor makes (job %s), and without them it would fire forever; set monitoring.serviceMonitor true as well", contract.ExporterName)
	}
	if !m.on() {
		for k := range m.set {
			if k != "serviceMonitor" && k != "rules" {
				add("monitoring.%s is set, but monitoring.serviceMonitor and monitoring.rules are both off, so it would do nothing; remove it (`pulumi config rm --path monitoring.%s`) or turn them on", k, k)
			}
		}
		return
	}
	if !m.ServiceMonitor && m.set["scrapeInterval"] {
		add("monitoring.scrapeInterval is set, but monitoring.serviceMonitor is off; remove it or turn the ServiceMonitor on")
	}
	if !m.Rules {
		for _, k := range monitoringThresholdKeys {
			if m.set[k] {
				add("monitoring.%s is a setting of the alerting rules, but monitoring.rules is off, so it would do nothing; remove it (`pulumi config rm --path monitoring.%s`) or set monitoring.rules true", k, k)
			}
		}
	}
	if d, ok := monitoring.ParseDuration(m.ScrapeInterval); !ok || d < minScrapeInterval || d > maxScrapeInterval {
		add("monitoring.scrapeInterval is %q; give a whole number of seconds or minutes from 10s to 5m, such as %s (each scrape reads every pool from the API server)", m.ScrapeInterval, defaultScrapeInterval)
	}
	for k, v := range m.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			add("monitoring.labels has the key %q, which is not a Kubernetes label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			add("monitoring.labels.%s is %q, which is not a Kubernetes label value: %s", k, v, strings.Join(errs, "; "))
		}
	}
	if !m.Rules {
		return
	}
	if !promLabelName.MatchString(m.NamespaceLabel) || strings.HasPrefix(m.NamespaceLabel, "__") {
		add("monitoring.namespaceLabel is %q; give the Prometheus label that holds KEDA's and agent-sandbox's namespace after the scrape: exported_namespace (the default: scraped without honorLabels) or namespace (with honorLabels)", m.NamespaceLabel)
	}
	if m.set["runbookURL"] {
		if u, err := url.Parse(m.RunbookURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || strings.Contains(m.RunbookURL, "#") {
			add("monitoring.runbookURL is %q; give the address of your copy of docs/runbook.md as an http(s) URL without a #fragment, such as https://git.example.com/platform/warm-pool/blob/main/docs/runbook.md (each alert links to its own section, #<alert name in lower case>)", m.RunbookURL)
		}
	}
	scrape, _ := monitoring.ParseDuration(m.ScrapeInterval)
	t := m.Thresholds
	for _, d := range []struct {
		key, v   string
		min, max time.Duration
		why      string
	}{
		{"frozenFor", t.FrozenFor, time.Minute, time.Hour, "KEDA falls back after 3 failed reads, under a minute at a 15 s polling interval"},
		{"exporterDownFor", t.ExporterDownFor, time.Minute, time.Hour, "a rollout or an eviction leaves one replica serving, so a shorter outage of every replica is already worth a page"},
		{"refusedPoolsFor", t.RefusedPoolsFor, time.Minute, time.Hour, "a refused entry does not mend itself"},
		{"coldLaunchFor", t.ColdFor, time.Minute, 6 * time.Hour, "the window already smooths the share"},
		{"coldLaunchWindow", t.ColdWindow, 5 * time.Minute, 24 * time.Hour, "a share of claims needs a window holding several bursts"},
		{"pinnedAtMaxFor", t.PinnedFor, time.Minute, 6 * time.Hour, "a burst touching the ceiling for a sync or two is the ceiling working"},
		{"unschedulableFor", t.UnschedulableFor, 2 * time.Minute, time.Hour, "a pod waits about a minute for a node launch; each pod's own age is judged"},
		{"controllerDownFor", t.ControllerDownFor, time.Minute, time.Hour, "two replicas hand over in seconds; a restart takes under a minute"},
	} {
		v, ok := monitoring.ParseDuration(d.v)
		if !ok || v < d.min || v > d.max {
			add("monitoring.%s is %q; give a whole number and one unit (s, m or h) from %s to %s (%s)", d.key, d.v, short(d.min), short(d.max), d.why)
		}
	}
	if w, ok := monitoring.ParseDuration(t.ColdWindow); ok && scrape > 0 && w < 4*scrape {
		add("monitoring.coldLaunchWindow is %s, under four scrapes of %s; an increase() over fewer samples is mostly extrapolation, so make it at least %s", t.ColdWindow, m.ScrapeInterval, short(4*scrape))
	}
	if scrape > 0 {
		if w, _ := monitoring.ParseDuration(monitoring.FrozenWindow); w < 4*scrape {
			add("monitoring.scrapeInterval is %s, but the frozen rule reads KEDA's counters over %s, which needs at least four scrapes; scrape every %s or less", m.ScrapeInterval, monitoring.FrozenWindow, short(w/4))
		}
	}
	if t.ReadFailureRatio <= 0 || t.ReadFailureRatio > 1 {
		add("monitoring.readFailureRatio is %v; it must be above 0 and at most 1 (the share of KEDA's reads that failed)", t.ReadFailureRatio)
	}
	if t.ColdRatio <= 0 || t.ColdRatio >= 1 {
		add("monitoring.coldLaunchRatio is %v; it must be above 0 and below 1 (the share of claims that found no warm sandbox)", t.ColdRatio)
	}
	if t.ColdMinClaims < 1 || t.ColdMinClaims > 1_000_000 {
		add("monitoring.coldLaunchMinClaims is %d; it must be 1..1000000 (the claims in the window below which a share says little)", t.ColdMinClaims)
	}
}

// validateMonitoringInputs refuses rules that read metrics nothing would scrape: in install mode
// the stack scrapes KEDA only with keda.serviceMonitor, and WarmPoolFrozen and WarmPoolKedaUnseen
// read KEDA's operator. (agent-sandbox's controller is scraped whenever monitoring.serviceMonitor
// is, which rules require; adopted installs are the adopter's to scrape: their Unseen rules say
// when they are not.)
func (c *Config) validateMonitoringInputs(add func(string, ...any)) {
	if c.Monitoring.Rules && c.KedaMode == components.ModeInstall && !c.Keda.ServiceMonitor {
		add("monitoring.rules is true, but the KEDA this stack installs is not scraped: WarmPoolFrozen reads KEDA's operator's metrics and could never fire, " +
			"and WarmPoolKedaUnseen would fire for every pool; set keda.serviceMonitor true as well (`pulumi config set --path keda.serviceMonitor true`)")
	}
}

// short writes a duration as the config does: 90s, 5m, 1h.
func short(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// monitoringArgs are the Monitoring component's settings.
func (c *Config) monitoringArgs() *components.MonitoringArgs {
	m := c.Monitoring
	interval := ""
	if m.ServiceMonitor {
		interval = m.ScrapeInterval
	}
	return &components.MonitoringArgs{ServiceMonitor: m.ServiceMonitor, ScrapeInterval: interval, Rules: m.Rules, Labels: m.Labels,
		AgentSandboxController: m.ServiceMonitor && c.AgentSandboxMode == components.ModeInstall}
}

// ruleFile is the stack's alerting rules: every pool's, and the exporter's.
func (c *Config) ruleFile() monitoring.RuleFile {
	spec := monitoring.Spec{
		ExporterNamespace: c.Namespace, ExporterJob: contract.ExporterName,
		NamespaceLabel: c.Monitoring.NamespaceLabel, FallbackFailureThreshold: components.FallbackFailureThreshold,
		RunbookURL: c.Monitoring.RunbookURL, Thresholds: c.Monitoring.Thresholds,
		Controllers: monitoring.InstalledControllers(c.KedaMode == components.ModeInstall && c.Keda.ServiceMonitor,
			c.Monitoring.ServiceMonitor && c.AgentSandboxMode == components.ModeInstall),
	}
	listed := c.exporterPools() != nil // else the exporter counts the one pool and labels no pool
	for _, p := range c.Pools() {
		mp := monitoring.Pool{Name: p.Name, Namespace: p.Namespace, ScaledObject: p.ScaledObjectName,
			HPA: contract.KedaHPAPrefix + p.ScaledObjectName}
		if listed {
			mp.ExporterPool = p.Name
		}
		spec.Pools = append(spec.Pools, mp)
	}
	return monitoring.Rules(spec)
}
