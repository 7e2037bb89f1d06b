"""A team's own Python stack adding an autoscaled warm pool from the warmpool package
(docs/package.md). `pulumi install` generates pulumi_warmpool into sdks/warmpool (the
`packages:` entry of Pulumi.yaml) and requirements.txt installs it; provider/sdkgen's tests
compile this file beside that SDK and refuse a keyword its classes do not take."""
import pulumi
import pulumi_kubernetes as k8s
import pulumi_warmpool as warmpool

config = pulumi.Config()
cluster = k8s.Provider("cluster", kubeconfig=config.require_secret("kubeconfig"))

# The program's config keys less the cluster's, with the same defaults and checks; the
# structured ones are typed (warmpool.TemplateArgs, warmpool.SizingArgs, ...).
sandboxes = warmpool.AutoscaledWarmPool(
    "sandboxes",
    namespace="team-sandboxes",
    min_replicas=1,
    max_replicas=3,
    keda_mode=config.get("kedaMode") or warmpool.KedaMode.INSTALL,
    agent_sandbox_mode=config.get("agentSandboxMode") or warmpool.AgentSandboxMode.INSTALL,
    template=warmpool.TemplateArgs(
        image="ghcr.io/acme/agent:1.4.2",
        env={"LOG_LEVEL": "info"},
        resources=warmpool.ResourcesArgs(requests={"cpu": "500m", "memory": "1Gi"}),
    ),
    sizing=warmpool.SizingArgs(policy=warmpool.SizingPolicy.ARRIVALS, boot_seconds=8),
    scale_down=warmpool.ScalingRulesArgs(stabilization_window_seconds=60),
    opts=pulumi.ResourceOptions(providers=[cluster]),
)

pulumi.export("namespace", sandboxes.namespace)
pulumi.export("pools", sandboxes.pools)
