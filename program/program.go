// Package program is the Pulumi program: a pool of pre-booted, VM-isolated sandboxes on EKS Auto
// Mode whose size follows SandboxClaim demand through KEDA. What it makes in AWS comes through a
// Cloud (awsprogram.Run passes awscomponents'), so the AutoscaledWarmPool component, which makes
// nothing there, builds without the AWS and EKS SDKs.
package program

import (
	"maps"
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// Run is the whole stack, its cluster and what only that cluster has made by cloud: awsprogram.Run,
// which main runs under the Pulumi CLI and the e2e inline through the Automation API.
func Run(ctx *pulumi.Context, cloud Cloud) error {
	cfg, err := LoadConfig(ctx)
	if err != nil {
		return err
	}
	cluster, err := cloud.NewCluster(ctx, "cluster", &components.ClusterArgs{
		Mode: cfg.ClusterMode, Name: cfg.ClusterName, KubernetesVersion: cfg.KubernetesVersion,
		VpcID: cfg.VpcID, PrivateSubnetIDs: cfg.PrivateSubnetIDs,
		AdminPrincipalArns: cfg.AdminPrincipalArns, PreviewPrincipalArn: cfg.PreviewPrincipalArn,
		EndpointPrivateAccess: cfg.EndpointPrivateAccess, EndpointPublicAccess: cfg.EndpointPublicAccess,
		PublicAccessCidrs: cfg.EndpointPublicAccessCidrs, Tags: cfg.AWSTags(), UpgradePolicy: cfg.UpgradePolicy,
		LogTypes: cfg.ClusterLogTypes, LogRetentionDays: cfg.ClusterLogRetentionDays,
		SecretsKmsKeyArn:  cfg.SecretsKmsKeyArn,
		NatGatewayPerZone: cfg.NatGatewayPerZone, DeletionProtection: cfg.DeletionProtection,
		Kubeconfig: cfg.Kubeconfig,
	})
	if err != nil {
		return err
	}
	// Every in-cluster resource goes through the cluster's provider (default providers are disabled).
	on := placement{inCluster: pulumi.Providers(cluster.Provider), cloud: cloud}
	if cluster.Created {
		on.newClusterKubeconfig = &cluster.Kubeconfig
		on.autoMode = cluster.AutoMode
	}
	outputs, err := deploy(ctx, cfg, on)
	if err != nil {
		return err
	}
	ctx.Export("clusterName", cluster.Name)
	ctx.Export("kubeconfig", cluster.Kubeconfig)
	for _, key := range slices.Sorted(maps.Keys(outputs)) {
		ctx.Export(key, outputs[key])
	}
	return nil
}

// placement is where deploy puts the stack's in-cluster resources: the program's own
// cluster, or the one an AutoscaledWarmPool component's caller reaches (component.go).
type placement struct {
	// inCluster is on every in-cluster component: the cluster's provider, or the parent
	// whose kubernetes provider they inherit.
	inCluster pulumi.ResourceOption
	// newClusterKubeconfig: the cluster was created by this run, and is read only once it answers.
	newClusterKubeconfig *pulumi.StringOutput
	// autoMode: the cluster is the stack's own Auto Mode cluster, whose parts a NodeClass names.
	autoMode *components.AutoModeParts
	// cloud makes what only the program's own cluster has (its nodes, the image's ECR
	// repository); nil for a component, which makes none of it.
	cloud Cloud
	// scope names the resources after the AutoscaledWarmPool that holds them; the program's is
	// empty, its names as they always were.
	scope components.Scope
	// shared are the installs another AutoscaledWarmPool of the stack makes, which this one
	// adopts (components.ModeShared).
	shared map[install]bool
}

// mode is the mode of an install: the config's, or ModeShared when another component makes it.
func (on placement) mode(what install, configured string) string {
	if on.shared[what] {
		return components.ModeShared
	}
	return configured
}

// deploy is everything in the cluster: the runtime class, agent-sandbox and KEDA, each pool,
// the exporter, the autoscalers and the monitoring; it returns the outputs verify reads.
func deploy(ctx *pulumi.Context, cfg *Config, on placement) (pulumi.Map, error) {
	p, err := newPlatform(ctx, cfg, on)
	if err != nil {
		return nil, err
	}
	pools := cfg.Pools()
	warmPools, err := newWarmPools(ctx, cfg, p, pools)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, cfg, p, pools, warmPools)
	if err != nil {
		return nil, err
	}
	outputs, err := newAutoscalers(ctx, cfg, p, pools, warmPools, exp)
	if err != nil {
		return nil, err
	}
	if p.monitoring != nil {
		if err := p.monitoring.Create(ctx, &components.MonitoringTargets{
			Namespace: exp.stackNamespaceName, RuleFile: cfg.ruleFile(),
			DependsOn:             []pulumi.Resource{exp.stackNamespace, exp.claimExporter.Service},
			AgentSandboxInstalled: p.agentSandboxInstalled,
		}); err != nil {
			return nil, err
		}
	}
	outputs["stackNamespace"] = exp.stackNamespaceName
	outputs["stackLabel"] = pulumi.String(cfg.StackLabelValue())
	outputs["exporterServiceAccount"] = exp.claimExporter.ServiceAccountName
	outputs["exporterService"] = exp.claimExporter.ServiceName
	outputs["isolation"] = pulumi.String(cfg.Isolation)
	return outputs, nil
}

// platform is what every pool stands on: the runtime class, agent-sandbox and KEDA installed
// or checked in the cluster.
type platform struct {
	placement
	keda *components.Keda
	// monitoring is the exporter's ServiceMonitor and the alerting rules; nil when both are off.
	monitoring *components.Monitoring
	// installs are the installed resources themselves, not the components: destroy deletes the
	// namespaces (and the claims, sandboxes and ScaledObjects in them, whose finalizers these
	// controllers remove) before agent-sandbox and KEDA. See components.Keda.Installed.
	installs []pulumi.Resource
	// agentSandboxInstalled is agent-sandbox's part of installs.
	agentSandboxInstalled []pulumi.Resource
	// sandboxNodes is the stack's own NodeClass and NodePool (create mode); nil: the sandboxes go
	// wherever the cluster puts them.
	sandboxNodes *components.SandboxNodes
}

func newPlatform(ctx *pulumi.Context, cfg *Config, on placement) (*platform, error) {
	// The Prometheus Operator's CRDs are read first: without them the preview fails before
	// anything in the cluster is registered.
	var mon *components.Monitoring
	var err error
	if cfg.Monitoring.on() {
		args := cfg.monitoringArgs()
		args.Scope = on.scope
		if mon, err = components.NewMonitoring(ctx, "monitoring", args, on.inCluster); err != nil {
			return nil, err
		}
	}
	runtimeArgs := &components.SandboxRuntimeArgs{Mode: on.mode(installRuntimeClass, cfg.RuntimeClassMode), Name: contract.RuntimeClassName, Handler: cfg.RuntimeClassHandler,
		NewClusterKubeconfig: on.newClusterKubeconfig, Scope: on.scope}
	runtime, err := components.NewSandboxRuntime(ctx, "sandbox-runtime", runtimeArgs, on.inCluster)
	if err != nil {
		return nil, err
	}
	agentSandbox, err := components.NewAgentSandbox(ctx, "agent-sandbox", &components.AgentSandboxArgs{
		Mode: on.mode(installAgentSandbox, cfg.AgentSandboxMode), Version: cfg.AgentSandboxVersion, Scope: on.scope,
	}, on.inCluster)
	if err != nil {
		return nil, err
	}
	keda, err := components.NewKeda(ctx, "keda", &components.KedaArgs{
		Mode: on.mode(installKeda, cfg.KedaMode), ChartVersion: cfg.KedaChartVersion, Values: cfg.kedaValues(), Scope: on.scope,
	}, on.inCluster)
	if err != nil {
		return nil, err
	}
	var nodes *components.SandboxNodes
	if on.autoMode != nil && cfg.sandboxNodes() {
		if nodes, err = on.cloud.NewSandboxNodes(ctx, sandboxNodesName, cfg.sandboxNodesArgs(on.autoMode, runtime), on.inCluster); err != nil {
			return nil, err
		}
	}
	return &platform{placement: on, keda: keda, monitoring: mon, agentSandboxInstalled: agentSandbox.Installed, sandboxNodes: nodes,
		installs: slices.Concat(runtime.Installed, agentSandbox.Installed, keda.Installed)}, nil
}

// newWarmPools is each pool's namespace, template and warm pool. A listed pool's components
// are named after it; the one-pool shorthand's is "warm-pool", as it always was.
func newWarmPools(ctx *pulumi.Context, cfg *Config, p *platform, pools []*Pool) ([]*components.WarmPool, error) {
	listed := len(cfg.PoolList) > 0
	warmPools := make([]*components.WarmPool, len(pools))
	for i, pool := range pools {
		name := "warm-pool"
		if listed {
			name += "-" + pool.Name
		}
		args := &components.WarmPoolArgs{
			Namespace: pool.Namespace, StackLabelValue: cfg.StackLabelValue(),
			TemplateName: pool.TemplateName, PoolName: pool.Name, InitialReplicas: pool.MinReplicas,
			RuntimeClassName: contract.RuntimeClassName, Agent: pool.Agent,
			DependsOn: p.installs, Scope: p.scope,
		}
		if p.sandboxNodes != nil {
			// On the stack's own nodes; the NodePool is there before the first sandbox asks for a
			// node, and on destroy the sandboxes go before it.
			args.Nodes = p.sandboxNodes.Placement
			args.DependsOn = append(slices.Clone(p.installs), p.sandboxNodes.NodePool)
		}
		var err error
		if warmPools[i], err = components.NewWarmPool(ctx, name, args, p.inCluster); err != nil {
			return nil, err
		}
	}
	return warmPools, nil
}

// stackExporter is the exporter and the namespace it lives in: the one pool's, or one of its
// own beside the listed pools.
type stackExporter struct {
	stackNamespace     pulumi.Resource
	stackNamespaceName pulumi.StringOutput
	claimExporter      *components.ClaimExporter
}

func newExporter(ctx *pulumi.Context, cfg *Config, p *platform, pools []*Pool, warmPools []*components.WarmPool) (*stackExporter, error) {
	code, err := newExporterCode(ctx, cfg, p.placement)
	if err != nil {
		return nil, err
	}
	listed := len(cfg.PoolList) > 0
	var stackNamespace pulumi.Resource = warmPools[0].Namespace
	stackNamespaceName := warmPools[0].NamespaceName
	if listed {
		// A stack that ran the one-pool shorthand had this namespace under its WarmPool "warm-pool":
		// the alias carries it over (and the exporter in it), instead of deleting it and failing to
		// create it again under its new parent. A component's, under its WarmPool named before or
		// after its names were scoped.
		aliases := []pulumi.Alias{{Name: pulumi.String(p.scope.Name("warm-pool")), Type: pulumi.String(components.WarmPoolType)}}
		if p.scope != "" {
			aliases = append(aliases, pulumi.Alias{Name: pulumi.String("warm-pool"), Type: pulumi.String(components.WarmPoolType)})
		}
		ns, err := components.NewStackNamespace(ctx, "stack-namespace", &components.StackNamespaceArgs{
			Namespace: cfg.Namespace, StackLabelValue: cfg.StackLabelValue(), DependsOn: p.installs, Scope: p.scope,
		}, p.inCluster, pulumi.Aliases(aliases))
		if err != nil {
			return nil, err
		}
		stackNamespace, stackNamespaceName = ns.Namespace, ns.NamespaceName
	}
	if cfg.PreviewPrincipalArn != "" {
		if _, err := components.NewPreviewAccess(ctx, "preview-access", &components.PreviewAccessArgs{
			Namespace: stackNamespaceName, NamespaceName: cfg.Namespace, DependsOn: []pulumi.Resource{stackNamespace},
			SandboxNodes: p.sandboxNodes != nil,
		}, p.inCluster); err != nil {
			return nil, err
		}
	}
	var exporterPools []components.ExporterPool // nil: the one pool without arrivals, the exporter as it always ran
	for i, p := range cfg.exporterPools() {
		exporterPools = append(exporterPools, components.ExporterPool{ExporterPool: p, DependsOn: []pulumi.Resource{warmPools[i].Namespace}})
	}
	claimExporter, err := components.NewClaimExporter(ctx, "claim-exporter", &components.ClaimExporterArgs{
		Namespace: stackNamespaceName, NamespaceName: cfg.Namespace, DependsOn: []pulumi.Resource{stackNamespace},
		Selector: cfg.ClaimSelector, Image: code.image, ImagePlatform: code.platform, Source: code.source,
		Replicas: cfg.ExporterReplicas, Pools: exporterPools, Scope: p.scope,
	}, p.inCluster)
	if err != nil {
		return nil, err
	}
	return &stackExporter{stackNamespace: stackNamespace, stackNamespaceName: stackNamespaceName, claimExporter: claimExporter}, nil
}

// newAutoscalers is each pool's ScaledObject reading its count from the exporter, and the
// pools' outputs (the first pool's also under the keys a one-pool stack always exported).
func newAutoscalers(ctx *pulumi.Context, cfg *Config, p *platform, pools []*Pool, warmPools []*components.WarmPool, exp *stackExporter) (pulumi.Map, error) {
	listed := len(cfg.PoolList) > 0
	var poolOutputs pulumi.Array
	outputs := pulumi.Map{}
	for i, pc := range pools {
		pool := warmPools[i]
		exporterURL := exp.claimExporter.URL
		if listed {
			exporterURL = pulumi.Sprintf("%s%s", exp.claimExporter.ServiceURL, contract.DemandPoolPath(pc.Name))
		}
		if pc.ExporterURL != "" {
			exporterURL = pulumi.String(pc.ExporterURL).ToStringOutput()
		}
		name := "autoscaler"
		if listed {
			name += "-" + pc.Name
		}
		autoscaler, err := components.NewAutoscaler(ctx, name, &components.AutoscalerArgs{
			Namespace: pool.NamespaceName, Name: pc.ScaledObjectName, PoolName: pc.Name,
			MinReplicas: pc.MinReplicas, MaxReplicas: pc.MaxReplicas,
			TargetValue: pc.TargetValue, ActivationTargetValue: pc.ActivationTargetValue,
			PollingInterval: pc.PollingInterval, URL: exporterURL, FallbackReplicas: pc.FallbackReplicas,
			Headroom: pc.Headroom, Sizing: pc.Sizing, ScaleUp: pc.ScaleUp, ScaleDown: pc.ScaleDown, Scope: p.scope,
			DependsOn: append([]pulumi.Resource{pool.Namespace, pool.Pool, exp.claimExporter.Deployment, exp.claimExporter.Service}, p.keda.Installed...),
		}, p.inCluster)
		if err != nil {
			return nil, err
		}
		poolOutputs = append(poolOutputs, pulumi.Map{
			"name": pool.PoolName, "namespace": pool.NamespaceName, "templateName": pool.TemplateName,
			"scaledObjectName": autoscaler.Name, "exporterUrl": exporterURL,
			"claimSelector": pulumi.String(pc.ClaimSelector), "minReplicas": pulumi.Int(pc.MinReplicas),
			"maxReplicas": pulumi.Int(pc.MaxReplicas), "loadCap": pulumi.Int(pc.LoadCap),
			"sizingPolicy": pulumi.String(pc.Sizing.Policy),
		})
		if i > 0 {
			continue
		}
		// The first pool's keys, as a one-pool stack always exported them.
		outputs["namespace"] = pool.NamespaceName
		outputs["poolName"] = pool.PoolName
		outputs["templateName"] = pool.TemplateName
		outputs["scaledObjectName"] = autoscaler.Name
		outputs["exporterUrl"] = exporterURL
		outputs["claimSelector"] = pulumi.String(pc.ClaimSelector)
		outputs["minReplicas"] = pulumi.Int(pc.MinReplicas)
		outputs["maxReplicas"] = pulumi.Int(pc.MaxReplicas)
		outputs["loadCap"] = pulumi.Int(pc.LoadCap)
	}
	outputs["pools"] = poolOutputs
	return outputs, nil
}
