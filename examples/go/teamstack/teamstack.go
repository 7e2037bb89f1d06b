// Package teamstack is a team's own Go stack adding an autoscaled warm pool from the warmpool
// package's Go SDK (sdk/go/warmpool) on a cluster it already has. main.go runs it under the
// CLI; e2e/packagego_test.go runs it inline on the local control plane.
package teamstack

import (
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"

	"warmpool.local/warm-pool-autoscaling-keda/sdk/go/warmpool"
)

// Namespace is where the team's pool lives.
const Namespace = "team-sandboxes-go"

// Run is the stack: the team's cluster (a kubeconfig in config) and the component on it.
func Run(ctx *pulumi.Context) error {
	cfg := config.New(ctx, "")
	cluster, err := kubernetes.NewProvider(ctx, "cluster", &kubernetes.ProviderArgs{Kubeconfig: cfg.RequireSecret("kubeconfig")})
	if err != nil {
		return err
	}
	orDefault := func(key, def string) string {
		if v := cfg.Get(key); v != "" {
			return v
		}
		return def
	}
	// The modes and the isolation are enums of the SDK; config gives their values as text.
	kedaMode := warmpool.KedaMode(orDefault("kedaMode", string(warmpool.KedaModeInstall)))
	agentSandboxMode := warmpool.AgentSandboxMode(orDefault("agentSandboxMode", string(warmpool.AgentSandboxModeInstall)))
	isolation := warmpool.Isolation(orDefault("isolation", string(warmpool.IsolationVm)))
	sandboxes, err := warmpool.NewAutoscaledWarmPool(ctx, "sandboxes", &warmpool.AutoscaledWarmPoolArgs{
		// The program's config keys less the cluster's, with the same defaults and checks.
		Namespace:   pulumi.StringRef(Namespace),
		MinReplicas: pulumi.IntRef(1),
		MaxReplicas: pulumi.IntRef(3),
		// install: this stack installs KEDA and agent-sandbox; adopt: the cluster has them.
		KedaMode:         &kedaMode,
		AgentSandboxMode: &agentSandboxMode,
		// vm on EKS Auto Mode (Nitro Sandboxes); gvisor where the RuntimeClass runs gVisor.
		Isolation: &isolation,
		// The claim exporter's image in your registry; empty runs it from source in a Go image.
		ExporterImage: pulumi.StringPtr(orDefault("exporterImage", "")),
		// The structured inputs are typed: a misspelled field does not compile.
		ScaleDown: &warmpool.ScalingRulesArgs{StabilizationWindowSeconds: pulumi.Int(30)},
	}, pulumi.Providers(cluster))
	if err != nil {
		return err
	}
	// What `go run ./verify` reads: the component's outputs under the program's names, and the cluster's.
	ctx.Export("kubeconfig", cfg.RequireSecret("kubeconfig"))
	ctx.Export("clusterName", pulumi.String("team-cluster"))
	for key, out := range map[string]pulumi.Output{
		"namespace": sandboxes.Namespace, "stackLabel": sandboxes.StackLabel, "poolName": sandboxes.PoolName,
		"templateName": sandboxes.TemplateName, "scaledObjectName": sandboxes.ScaledObjectName,
		"exporterServiceAccount": sandboxes.ExporterServiceAccount, "exporterService": sandboxes.ExporterService,
		"exporterUrl": sandboxes.ExporterUrl, "claimSelector": sandboxes.ClaimSelector,
		"minReplicas": sandboxes.MinReplicas, "maxReplicas": sandboxes.MaxReplicas, "loadCap": sandboxes.LoadCap,
		"stackNamespace": sandboxes.StackNamespace, "pools": sandboxes.Pools, "isolation": sandboxes.Isolation,
	} {
		ctx.Export(key, out)
	}
	return nil
}
