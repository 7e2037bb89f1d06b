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

	pool, err := components.NewWarmPool(ctx, "warm-pool", &components.WarmPoolArgs{
		Namespace: cfg.Namespace, StackLabelValue: cfg.StackLabelValue(),
		TemplateName: cfg.TemplateName, PoolName: cfg.PoolName, InitialReplicas: cfg.MinReplicas,
		RuntimeClassName: contract.RuntimeClassName,
		// Destroy deletes the namespace (and the claims, sandboxes and ScaledObjects in it, whose
		// finalizers these controllers remove) before agent-sandbox and KEDA themselves. The
		// resources themselves, not the components: see components.Keda.Installed.
		DependsOn: slices.Concat(runtime.Installed, agentSandbox.Installed, keda.Installed),
	}, inCluster)
	if err != nil {
		return err
	}
	if cfg.PreviewPrincipalArn != "" {
		if _, err := components.NewPreviewAccess(ctx, "preview-access", &components.PreviewAccessArgs{
			Namespace: pool.NamespaceName, NamespaceName: cfg.Namespace, DependsOn: []pulumi.Resource{pool.Namespace},
		}, inCluster); err != nil {
			return err
		}
	}
	claimExporter, err := components.NewClaimExporter(ctx, "claim-exporter", &components.ClaimExporterArgs{
		Namespace: pool.NamespaceName, DependsOn: []pulumi.Resource{pool.Namespace},
		Selector: cfg.ClaimSelector, Image: cfg.ExporterImage, Source: exporterSource,
	}, inCluster)
	if err != nil {
		return err
	}
	exporterURL := claimExporter.URL
	if cfg.ExporterURL != "" {
		exporterURL = pulumi.String(cfg.ExporterURL).ToStringOutput()
	}
	autoscaler, err := components.NewAutoscaler(ctx, "autoscaler", &components.AutoscalerArgs{
		Namespace: pool.NamespaceName, Name: contract.ScaledObjectName, PoolName: cfg.PoolName,
		MinReplicas: cfg.MinReplicas, MaxReplicas: cfg.MaxReplicas,
		TargetValue: cfg.TargetValue, ActivationTargetValue: cfg.ActivationTargetValue,
		PollingInterval: cfg.PollingInterval, URL: exporterURL, FallbackReplicas: cfg.FallbackReplicas,
		Headroom:  cfg.Headroom,
		DependsOn: []pulumi.Resource{pool.Namespace, pool.Pool, claimExporter.Deployment, claimExporter.Service, keda},
	}, inCluster)
	if err != nil {
		return err
	}

	ctx.Export("clusterName", cluster.Name)
	ctx.Export("kubeconfig", cluster.Kubeconfig)
	ctx.Export("namespace", pool.NamespaceName)
	ctx.Export("stackLabel", pulumi.String(cfg.StackLabelValue()))
	ctx.Export("poolName", pool.PoolName)
	ctx.Export("templateName", pool.TemplateName)
	ctx.Export("scaledObjectName", autoscaler.Name)
	ctx.Export("exporterServiceAccount", claimExporter.ServiceAccountName)
	ctx.Export("exporterService", claimExporter.ServiceName)
	ctx.Export("exporterUrl", exporterURL)
	ctx.Export("claimSelector", pulumi.String(cfg.ClaimSelector))
	ctx.Export("minReplicas", pulumi.Int(cfg.MinReplicas))
	ctx.Export("maxReplicas", pulumi.Int(cfg.MaxReplicas))
	ctx.Export("loadCap", pulumi.Int(cfg.LoadCap))
	ctx.Export("isolation", pulumi.String(cfg.Isolation))
	return nil
}
