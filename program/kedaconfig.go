package program

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// Production defaults of KEDA's install: two of each, so a drain, a node loss or a crash is a
// leader handover instead of an outage (the fault table: with the operator or the metrics
// server down the pool holds its size but stops following demand until it is back).
const (
	defaultKedaOperatorReplicas      = 2
	defaultKedaMetricsServerReplicas = 2
	maxKedaReplicas                  = 5
)

// kedaResourceNames are what the two pods may ask for.
var kedaResourceNames = []string{"cpu", "memory"}

// readKeda reads the `keda` object: KEDA's install values.
func readKeda(o configObject) components.KedaValues {
	v := components.KedaValues{
		OperatorReplicas:      o.integer("operatorReplicas", defaultKedaOperatorReplicas),
		MetricsServerReplicas: o.integer("metricsServerReplicas", defaultKedaMetricsServerReplicas),
		ServiceMonitor:        o.boolean("serviceMonitor", false),
	}
	if res, ok := o.object("resources"); ok {
		for _, pod := range []struct {
			key string
			to  *components.Resources
		}{{"operator", &v.OperatorResources}, {"metricServer", &v.MetricServerResources}} {
			if r, ok := res.object(pod.key); ok {
				pod.to.Requests, pod.to.Limits = r.stringMap("requests"), r.stringMap("limits")
				r.done(r.keysRead())
			}
		}
		res.done(res.keysRead())
	}
	o.done(o.keysRead())
	return v
}

// defaultKeda is the install's values when the stack sets none.
func defaultKeda() components.KedaValues {
	return components.KedaValues{OperatorReplicas: defaultKedaOperatorReplicas, MetricsServerReplicas: defaultKedaMetricsServerReplicas}
}

// validateKeda checks the install values against what the chart and the API server accept.
func validateKeda(v components.KedaValues, add func(string, ...any)) {
	for _, r := range []struct {
		key string
		n   int
	}{{"keda.operatorReplicas", v.OperatorReplicas}, {"keda.metricsServerReplicas", v.MetricsServerReplicas}} {
		if r.n < 1 || r.n > maxKedaReplicas {
			add("%s is %d; it must be 1..%d: %d (the default) keeps a standby that takes over when the leader goes, 1 saves a pod but a drain is an outage", r.key, r.n, maxKedaReplicas, 2)
		}
	}
	for _, pod := range []struct {
		key string
		r   components.Resources
	}{{"keda.resources.operator", v.OperatorResources}, {"keda.resources.metricServer", v.MetricServerResources}} {
		for _, m := range []struct {
			key string
			q   map[string]string
		}{{"requests", pod.r.Requests}, {"limits", pod.r.Limits}} {
			for name, q := range m.q {
				if !slices.Contains(kedaResourceNames, name) {
					add("%s.%s has %q; KEDA's pods may ask for cpu and memory", pod.key, m.key, name)
					continue
				}
				if v, err := resource.ParseQuantity(q); err != nil || v.Sign() <= 0 {
					add("%s.%s.%s is %q; give a positive Kubernetes quantity (e.g. 100m, 1, 256Mi)", pod.key, m.key, name, q)
				}
			}
		}
		for name, lim := range pod.r.Limits {
			l, errL := resource.ParseQuantity(lim)
			q, errQ := resource.ParseQuantity(pod.r.Requests[name])
			if _, has := pod.r.Requests[name]; has && errL == nil && errQ == nil && q.Cmp(l) > 0 {
				add("%s.requests.%s (%s) is above its limit (%s); the API server rejects that", pod.key, name, pod.r.Requests[name], lim)
			}
		}
	}
}

// kedaSetMessage refuses install values beside an adopted KEDA.
func kedaSetMessage() string {
	return fmt.Sprintf("keda sets KEDA's install values, but kedaMode is %s: an adopted KEDA is shared and never re-valued by this stack; remove it (`pulumi config rm keda`), or let the stack install KEDA (kedaMode=%s)",
		components.ModeAdopt, components.ModeInstall)
}

// kedaValues are the values the Keda component gets: the install's, none for an adopted KEDA.
// KEDA's ServiceMonitors carry monitoring.labels, as the exporter's does: the one Prometheus
// selector the team configures selects all the monitors the rules read.
func (c *Config) kedaValues() components.KedaValues {
	switch {
	case c.KedaMode != components.ModeInstall:
		return components.KedaValues{}
	case !c.kedaSet:
		return defaultKeda()
	}
	v := c.Keda
	if v.ServiceMonitor && len(c.Monitoring.Labels) > 0 {
		v.ServiceMonitorLabels = c.Monitoring.Labels
	}
	return v
}
