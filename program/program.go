// Package program is the Pulumi program: a pool of pre-booted, VM-isolated sandboxes on EKS Auto
// Mode whose size follows SandboxClaim demand through KEDA.
package program

import (
	"slices"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/exporter"
)

// Run is the whole stack: main runs it under the Pulumi CLI, the e2e inline through the Automation API.
func Run(ctx *pulumi.Context) error {
	cfg, err := LoadConfig(ctx)
	if err != nil {
		return err
	}
	var exporterSource map[string]string
	if cfg.ExporterImage == "" {
		if exporterSource, err = exporter.PodSource(); err != nil {
			return err
		}
	}

	cluster, err := components.NewCluster(ctx, "cluster", &components.ClusterArgs{
		Mode: cfg.ClusterMode, Name: cfg.ClusterName, KubernetesVersion: cfg.KubernetesVersion,
		VpcID: cfg.VpcID, PrivateSubnetIDs: cfg.PrivateSubnetIDs,
		AdminPrincipalArns: cfg.AdminPrincipalArns, PreviewPrincipalArn: cfg.PreviewPrincipalArn,
		Kubeconfig: cfg.Kubeconfig,
	})
	if err != nil {
		return err
	}
	// Every in-cluster resource goes through the cluster's provider (default providers are disabled).
	inCluster := pulumi.Providers(cluster.Provider)

	runtime, err := components.NewSandboxRuntime(ctx, "sandbox-runtime", &components.SandboxRuntimeArgs{
		Mode: cfg.RuntimeClassMode, Name: contract.RuntimeClassName, Handler: cfg.RuntimeClassHandler,
	}, inCluster)
	if err != nil {
		return err
	}
	agentSandbox, err := components.NewAgentSandbox(ctx, "agent-sandbox", &components.AgentSandboxArgs{
		Mode: cfg.AgentSandboxMode, Version: cfg.AgentSandboxVersion,
	}, inCluster)
	if err != nil {
		return err
	}
	keda, err := components.NewKeda(ctx, "keda", &components.KedaArgs{
		Mode: cfg.KedaMode, ChartVersion: cfg.KedaChartVersion,
	}, inCluster)
	if err != nil {
		return err
	}

	// Destroy deletes the namespaces (and the claims, sandboxes and ScaledObjects in them, whose
	// finalizers these controllers remove) before agent-sandbox and KEDA themselves. The
	// resources themselves, not the components: see components.Keda.Installed.
	installs := slices.Concat(runtime.Installed, agentSandbox.Installed, keda.Installed)
	pools := cfg.Pools()
	listed := len(cfg.PoolList) > 0
	warmPools := make([]*components.WarmPool, len(pools))
	for i, p := range pools {
		name := "warm-pool"
		if listed {
			name += "-" + p.Name
		}
		if warmPools[i], err = components.NewWarmPool(ctx, name, &components.WarmPoolArgs{
			Namespace: p.Namespace, StackLabelValue: cfg.StackLabelValue(),
			TemplateName: p.TemplateName, PoolName: p.Name, InitialReplicas: p.MinReplicas,
			RuntimeClassName: contract.RuntimeClassName, Agent: p.Agent,
			DependsOn: installs,
		}, inCluster); err != nil {
			return err
		}
	}
	// The exporter lives in the stack's namespace: the one pool's, or one of its own beside the listed pools.
	stackNamespace, stackNamespaceName := warmPools[0].Namespace, warmPools[0].NamespaceName
	if listed {
		// A stack that ran the one-pool shorthand had this namespace under its WarmPool "warm-pool":
		// the alias carries it over (and the exporter in it), instead of deleting it and failing to
		// create it again under its new parent.
		ns, err := components.NewStackNamespace(ctx, "stack-namespace", &components.StackNamespaceArgs{
			Namespace: cfg.Namespace, StackLabelValue: cfg.StackLabelValue(), DependsOn: installs,
		}, inCluster, pulumi.Aliases([]pulumi.Alias{{Name: pulumi.String("warm-pool"), Type: pulumi.String(components.WarmPoolType)}}))
		if err != nil {
			return err
		}
		stackNamespace, stackNamespaceName = ns.Namespace, ns.NamespaceName
	}
	if cfg.PreviewPrincipalArn != "" {
		if _, err := components.NewPreviewAccess(ctx, "preview-access", &components.PreviewAccessArgs{
			Namespace: stackNamespaceName, NamespaceName: cfg.Namespace, DependsOn: []pulumi.Resource{stackNamespace},
		}, inCluster); err != nil {
			return err
		}
	}
	exporterPools := make([]components.ExporterPool, 0, len(pools))
	for i, p := range pools {
		exporterPools = append(exporterPools, components.ExporterPool{
			ExporterPool: contract.ExporterPool{Name: p.Name, Namespace: p.Namespace, Selector: p.ClaimSelector, ArrivalWindowsSeconds: p.ArrivalWindows()},
			DependsOn:    []pulumi.Resource{warmPools[i].Namespace},
		})
	}
	if !listed && pools[0].ArrivalWindows() == nil {
		exporterPools = nil // the one pool without arrivals: the exporter as it always ran
	}
	claimExporter, err := components.NewClaimExporter(ctx, "claim-exporter", &components.ClaimExporterArgs{
		Namespace: stackNamespaceName, NamespaceName: cfg.Namespace, DependsOn: []pulumi.Resource{stackNamespace},
		Selector: cfg.ClaimSelector, Image: cfg.ExporterImage, Replicas: cfg.ExporterReplicas, Source: exporterSource, Pools: exporterPools,
	}, inCluster)
	if err != nil {
		return err
	}

	var poolOutputs pulumi.Array
	for i, p := range pools {
		pool := warmPools[i]
		exporterURL := claimExporter.URL
		if listed {
			exporterURL = pulumi.Sprintf("%s%s", claimExporter.ServiceURL, contract.DemandPoolPath(p.Name))
		}
		if p.ExporterURL != "" {
			exporterURL = pulumi.String(p.ExporterURL).ToStringOutput()
		}
		name := "autoscaler"
		if listed {
			name += "-" + p.Name
		}
		autoscaler, err := components.NewAutoscaler(ctx, name, &components.AutoscalerArgs{
			Namespace: pool.NamespaceName, Name: p.ScaledObjectName, PoolName: p.Name,
			MinReplicas: p.MinReplicas, MaxReplicas: p.MaxReplicas,
			TargetValue: p.TargetValue, ActivationTargetValue: p.ActivationTargetValue,
			PollingInterval: p.PollingInterval, URL: exporterURL, FallbackReplicas: p.FallbackReplicas,
			Headroom: p.Headroom, Sizing: p.Sizing,
			DependsOn: append([]pulumi.Resource{pool.Namespace, pool.Pool, claimExporter.Deployment, claimExporter.Service}, keda.Installed...),
		}, inCluster)
		if err != nil {
			return err
		}
		out := pulumi.Map{
			"name": pool.PoolName, "namespace": pool.NamespaceName, "templateName": pool.TemplateName,
			"scaledObjectName": autoscaler.Name, "exporterUrl": exporterURL,
			"claimSelector": pulumi.String(p.ClaimSelector), "minReplicas": pulumi.Int(p.MinReplicas),
			"maxReplicas": pulumi.Int(p.MaxReplicas), "loadCap": pulumi.Int(p.LoadCap),
			"sizingPolicy": pulumi.String(p.Sizing.Policy),
		}
		poolOutputs = append(poolOutputs, out)
		if i > 0 {
			continue
		}
		// The first pool's keys, as a one-pool stack always exported them.
		ctx.Export("namespace", pool.NamespaceName)
		ctx.Export("poolName", pool.PoolName)
		ctx.Export("templateName", pool.TemplateName)
		ctx.Export("scaledObjectName", autoscaler.Name)
		ctx.Export("exporterUrl", exporterURL)
		ctx.Export("claimSelector", pulumi.String(p.ClaimSelector))
		ctx.Export("minReplicas", pulumi.Int(p.MinReplicas))
		ctx.Export("maxReplicas", pulumi.Int(p.MaxReplicas))
		ctx.Export("loadCap", pulumi.Int(p.LoadCap))
	}

	ctx.Export("clusterName", cluster.Name)
	ctx.Export("kubeconfig", cluster.Kubeconfig)
	ctx.Export("stackNamespace", stackNamespaceName)
	ctx.Export("stackLabel", pulumi.String(cfg.StackLabelValue()))
	ctx.Export("exporterServiceAccount", claimExporter.ServiceAccountName)
	ctx.Export("exporterService", claimExporter.ServiceName)
	ctx.Export("pools", poolOutputs)
	ctx.Export("isolation", pulumi.String(cfg.Isolation))
	return nil
}
