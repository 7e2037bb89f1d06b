package components

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// KedaValues are the kedacore/keda chart values the program sets in install mode (adopt mode
// never re-values a shared install). The keys are the chart's own (keda/values.yaml):
// operator.replicaCount, metricsServer.replicaCount, podDisruptionBudget.{operator,metricServer},
// resources.{operator,metricServer}, prometheus.{operator,metricServer}.serviceMonitor.
type KedaValues struct {
	// OperatorReplicas and MetricsServerReplicas: 0 is the chart's 1. From 2 each gets a
	// PodDisruptionBudget of minAvailable 1, so a drain leaves one; with 1 a budget would block
	// every drain. Both elect a leader: a second replica is a standby that shortens an outage.
	OperatorReplicas, MetricsServerReplicas int
	// OperatorResources and MetricServerResources replace the chart's (requests 100m/100Mi,
	// limits 1/1000Mi) when set.
	OperatorResources, MetricServerResources Resources
	// ServiceMonitor makes the chart expose the operator's and the metrics server's Prometheus
	// metrics and create a ServiceMonitor for each (needs the Prometheus Operator's CRDs).
	ServiceMonitor bool
	// ServiceMonitorLabels go on both ServiceMonitors (the chart's
	// prometheus.{operator,metricServer}.serviceMonitor.additionalLabels), so the team's
	// Prometheus selects them: kube-prometheus-stack selects only `release: <its release>`, and an
	// unselected monitor leaves WarmPoolFrozen with nothing to read.
	ServiceMonitorLabels map[string]string
}

// Resources are a container's requests and limits by resource name (cpu, memory).
type Resources struct {
	Requests, Limits map[string]string
}

func (r Resources) set() bool { return len(r.Requests) > 0 || len(r.Limits) > 0 }

func (r Resources) values() pulumi.Map {
	m := pulumi.Map{}
	if len(r.Requests) > 0 {
		m["requests"] = pulumi.ToStringMap(r.Requests)
	}
	if len(r.Limits) > 0 {
		m["limits"] = pulumi.ToStringMap(r.Limits)
	}
	return m
}

// chartValues renders v as the chart's values; nil when v is zero (the chart's defaults).
func (v KedaValues) chartValues() pulumi.Map {
	values := pulumi.Map{}
	pdb := pulumi.Map{}
	if v.OperatorReplicas > 0 {
		values["operator"] = pulumi.Map{"replicaCount": pulumi.Int(v.OperatorReplicas)}
		if v.OperatorReplicas > 1 {
			pdb["operator"] = pulumi.Map{"minAvailable": pulumi.Int(1)}
		}
	}
	if v.MetricsServerReplicas > 0 {
		values["metricsServer"] = pulumi.Map{"replicaCount": pulumi.Int(v.MetricsServerReplicas)}
		if v.MetricsServerReplicas > 1 {
			pdb["metricServer"] = pulumi.Map{"minAvailable": pulumi.Int(1)}
		}
	}
	if len(pdb) > 0 {
		values["podDisruptionBudget"] = pdb
	}
	res := pulumi.Map{}
	if v.OperatorResources.set() {
		res["operator"] = v.OperatorResources.values()
	}
	if v.MetricServerResources.set() {
		res["metricServer"] = v.MetricServerResources.values()
	}
	if len(res) > 0 {
		values["resources"] = res
	}
	if v.ServiceMonitor {
		sm := pulumi.Map{"enabled": pulumi.Bool(true)}
		if len(v.ServiceMonitorLabels) > 0 {
			sm["additionalLabels"] = pulumi.ToStringMap(v.ServiceMonitorLabels)
		}
		monitored := pulumi.Map{"enabled": pulumi.Bool(true), "serviceMonitor": sm}
		values["prometheus"] = pulumi.Map{"operator": monitored, "metricServer": monitored}
	}
	if len(values) == 0 {
		return nil
	}
	return values
}
