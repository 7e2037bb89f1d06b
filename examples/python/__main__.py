"""A team's own Python stack adding an autoscaled warm pool from the warmpool package
(docs/package.md). `pulumi package add` generates pulumi_warmpool into sdks/warmpool;
provider/sdkgen's tests compile this file beside that SDK."""
import pulumi
import pulumi_kubernetes as k8s
import pulumi_warmpool as warmpool

config = pulumi.Config()
cluster = k8s.Provider("cluster", kubeconfig=config.require_secret("kubeconfig"))

# The program's config keys less the cluster's, with the same defaults and checks.
sandboxes = warmpool.AutoscaledWarmPool(
    "sandboxes",
    namespace="team-sandboxes",
    min_replicas=1,
    max_replicas=3,
    keda_mode=config.get("kedaMode") or "install",
    agent_sandbox_mode=config.get("agentSandboxMode") or "install",
    opts=pulumi.ResourceOptions(providers=[cluster]),
)

pulumi.export("namespace", sandboxes.namespace)
pulumi.export("pools", sandboxes.pools)
