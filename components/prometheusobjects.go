package components

import (
	"encoding/json"
	"fmt"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
)

// The Prometheus Operator's resources the stack's monitoring creates.
const (
	// PrometheusRuleCRD holds the alerting rules; ServiceMonitorCRD (kedainstall.go) the
	// exporter's scrape.
	PrometheusRuleCRD      = "prometheusrules.monitoring.coreos.com"
	prometheusOperatorAPI  = "monitoring.coreos.com/v1"
	prometheusOperatorCRDV = "v1"
	serviceMonitorKind     = "ServiceMonitor"
	prometheusRuleKind     = "PrometheusRule"
	MonitoringType         = "warmpool:index:Monitoring"
	serviceMonitorName     = contract.ExporterName
	prometheusRuleName     = contract.ProjectName
)

// MonitoringArgs says what the stack's monitoring is made of.
type MonitoringArgs struct {
	// ServiceMonitor scrapes the exporter through its Service: every ready replica is a target
	// of job claim-exporter (the Service's name).
	ServiceMonitor bool
	// ScrapeInterval is the ServiceMonitor's interval (a Prometheus duration).
	ScrapeInterval string
	// Rules makes a PrometheusRule of the rules given to Create.
	Rules bool
	// Labels go on every object, for the Prometheus' serviceMonitorSelector and ruleSelector
	// (kube-prometheus-stack selects on release: <its release> by default).
	Labels map[string]string
	// AgentSandboxController scrapes the agent-sandbox controller the stack installs (its
	// metrics Service in agent-sandbox-system): the cold-launch and pinned rules read it.
	AgentSandboxController bool
	Scope                  Scope
}

// MonitoringTargets is what the objects watch, known once the exporter exists.
type MonitoringTargets struct {
	// Namespace is the exporter's (its Service's) namespace; both objects live there.
	Namespace pulumi.StringInput
	// RuleFile is the rules the PrometheusRule holds (monitoring.Rules).
	RuleFile monitoring.RuleFile
	// DependsOn: at least the namespace and the exporter's Service.
	DependsOn []pulumi.Resource
	// AgentSandboxInstalled is the agent-sandbox install its ServiceMonitor goes beside.
	AgentSandboxInstalled []pulumi.Resource
}

// Monitoring is the exporter's ServiceMonitor and the stack's PrometheusRule.
type Monitoring struct {
	pulumi.ResourceState

	args           MonitoringArgs
	ServiceMonitor *apiextensions.CustomResource
	PrometheusRule *apiextensions.CustomResource
	// AgentSandboxMonitor scrapes agent-sandbox's controller (install mode).
	AgentSandboxMonitor *apiextensions.CustomResource
}

// NewMonitoring registers the component and reads the Prometheus Operator's CRDs it needs
// (servicemonitors, and prometheusrules with Rules), failing when one is missing or does not
// serve v1. Call it before anything else in the cluster is registered: a cluster without the
// operator then fails the preview with nothing created. Create makes the objects.
func NewMonitoring(ctx *pulumi.Context, name string, args *MonitoringArgs, opts ...pulumi.ResourceOption) (*Monitoring, error) {
	m := &Monitoring{args: *args}
	if err := ctx.RegisterComponentResource(MonitoringType, args.Scope.Name(name), m, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	if args.Rules && !args.ServiceMonitor {
		// The exporter-down rule reads the targets this ServiceMonitor makes.
		return nil, fmt.Errorf("the alerting rules need the exporter's ServiceMonitor: ClaimExporterDown reads its targets (job %s)", contract.ExporterName)
	}
	var crds []RequiredCRD
	if args.ServiceMonitor {
		crds = append(crds, RequiredCRD{Name: ServiceMonitorCRD, Version: prometheusOperatorCRDV})
	}
	if args.Rules {
		crds = append(crds, RequiredCRD{Name: PrometheusRuleCRD, Version: prometheusOperatorCRDV})
	}
	how := "install the Prometheus Operator (or kube-prometheus-stack) first, or turn monitoring.serviceMonitor and monitoring.rules off"
	if _, err := requireCRDs(ctx, args.Scope, m, "the Prometheus Operator", how, crds...); err != nil {
		return nil, err
	}
	return m, nil
}

// Create makes the ServiceMonitor and the PrometheusRule and registers the component's outputs.
func (m *Monitoring) Create(ctx *pulumi.Context, t *MonitoringTargets) error {
	labels := pulumi.StringMap{contract.PartOfLabel: pulumi.String(contract.ManagedByValue)}
	for k, v := range m.args.Labels {
		labels[k] = pulumi.String(v)
	}
	meta := func(name string) *metav1.ObjectMetaArgs {
		return &metav1.ObjectMetaArgs{Name: pulumi.String(name), Namespace: t.Namespace.ToStringOutput(), Labels: labels}
	}
	opts := []pulumi.ResourceOption{pulumi.Parent(m), pulumi.DependsOn(t.DependsOn)}
	outputs := pulumi.Map{}
	if m.args.ServiceMonitor {
		// The exporter's Service (its own namespace): the targets are the endpoints KEDA's reads
		// go to. No honorLabels: the exporter's namespace label (a pool's) becomes
		// exported_namespace, as the KEDA chart's does.
		sm, err := m.serviceMonitor(ctx, serviceMonitorName, meta(serviceMonitorName), exporterLabels, "http", opts...)
		if err != nil {
			return err
		}
		m.ServiceMonitor = sm
		outputs["serviceMonitor"] = sm.Metadata.Name()
	}
	if m.args.AgentSandboxController {
		// The manifest's Service: its targets' job is its name, agent-sandbox-controller. No
		// honorLabels, as the exporter's and KEDA's: namespaceLabel covers all three.
		md := meta(contract.AgentSandboxControllerService)
		md.Namespace = pulumi.String(contract.AgentSandboxNamespace)
		sm, err := m.serviceMonitor(ctx, contract.AgentSandboxControllerService, md, pulumi.StringMap{"app": pulumi.String(contract.AgentSandboxControllerService)},
			contract.AgentSandboxMetricsPort, pulumi.Parent(m), pulumi.DependsOn(t.AgentSandboxInstalled))
		if err != nil {
			return err
		}
		m.AgentSandboxMonitor = sm
		outputs["agentSandboxServiceMonitor"] = sm.Metadata.Name()
	}
	if m.args.Rules {
		groups, err := plainInput(t.RuleFile.Groups)
		if err != nil {
			return err
		}
		rule, err := apiextensions.NewCustomResource(ctx, m.args.Scope.Name(prometheusRuleName), &apiextensions.CustomResourceArgs{
			ApiVersion:  pulumi.String(prometheusOperatorAPI),
			Kind:        pulumi.String(prometheusRuleKind),
			Metadata:    meta(prometheusRuleName),
			OtherFields: kubernetes.UntypedArgs{"spec": pulumi.Map{"groups": groups}},
		}, m.args.Scope.Opts(prometheusRuleName, opts...)...)
		if err != nil {
			return err
		}
		m.PrometheusRule = rule
		outputs["prometheusRule"] = rule.Metadata.Name()
	}
	return ctx.RegisterResourceOutputs(m, outputs)
}

// serviceMonitor scrapes /metrics on the named port of the Services matchLabels selects, every
// ScrapeInterval when one is set.
func (m *Monitoring) serviceMonitor(ctx *pulumi.Context, name string, md *metav1.ObjectMetaArgs, matchLabels pulumi.StringMap, port string, opts ...pulumi.ResourceOption) (*apiextensions.CustomResource, error) {
	endpoint := pulumi.Map{"port": pulumi.String(port), "path": pulumi.String("/metrics")}
	if m.args.ScrapeInterval != "" {
		endpoint["interval"] = pulumi.String(m.args.ScrapeInterval)
	}
	return apiextensions.NewCustomResource(ctx, m.args.Scope.Name(name), &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(prometheusOperatorAPI),
		Kind:       pulumi.String(serviceMonitorKind),
		Metadata:   md,
		OtherFields: kubernetes.UntypedArgs{"spec": pulumi.Map{
			"selector":  pulumi.Map{"matchLabels": matchLabels},
			"endpoints": pulumi.Array{endpoint},
		}},
	}, m.args.Scope.Opts(name, opts...)...)
}

// plainInput turns a value with JSON tags (the rule file) into a Pulumi input of the same shape,
// so the PrometheusRule holds exactly what monitoring.Rules rendered.
func plainInput(v any) (pulumi.Input, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		return nil, err
	}
	return toInput(plain), nil
}

func toInput(v any) pulumi.Input {
	switch x := v.(type) {
	case map[string]any:
		m := pulumi.Map{}
		for k, e := range x {
			m[k] = toInput(e)
		}
		return m
	case []any:
		a := pulumi.Array{}
		for _, e := range x {
			a = append(a, toInput(e))
		}
		return a
	case string:
		return pulumi.String(x)
	case float64:
		return pulumi.Float64(x)
	case bool:
		return pulumi.Bool(x)
	}
	return nil
}
