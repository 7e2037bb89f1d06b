// A team's own TypeScript stack adding an autoscaled warm pool from the warmpool package
// (docs/package.md). `pulumi install` generates @warmpool/warmpool into sdks/warmpool (the
// `packages:` entry of Pulumi.yaml) and package.json links it; provider/sdkgen's tests
// type-check this file against that SDK, and a misspelled key anywhere in it fails them.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as warmpool from "@warmpool/warmpool";

const config = new pulumi.Config();
const cluster = new k8s.Provider("cluster", { kubeconfig: config.requireSecret("kubeconfig") });

// The program's config keys less the cluster's, with the same defaults and checks; the
// structured ones are typed (warmpool.types.input), the modes are enums.
const sandboxes = new warmpool.AutoscaledWarmPool("sandboxes", {
    namespace: "team-sandboxes",
    minReplicas: 1,
    maxReplicas: 3,
    kedaMode: config.get<warmpool.KedaMode>("kedaMode") ?? warmpool.KedaMode.Install,
    agentSandboxMode: config.get<warmpool.AgentSandboxMode>("agentSandboxMode") ?? warmpool.AgentSandboxMode.Install,
    isolation: warmpool.Isolation.Vm,
    template: {
        image: "ghcr.io/acme/agent:1.4.2",
        env: { LOG_LEVEL: "info" },
        resources: { requests: { cpu: "500m", memory: "1Gi" } },
    },
    sizing: {
        policy: warmpool.SizingPolicy.Arrivals,
        bootSeconds: 8,
    },
    scaleDown: { stabilizationWindowSeconds: 60 },
}, { providers: [cluster] });

export const namespace = sandboxes.namespace;
export const pools = sandboxes.pools;
