// A team's own TypeScript stack adding an autoscaled warm pool from the warmpool package
// (docs/package.md). `pulumi package add` generates @warmpool/warmpool into sdks/warmpool;
// provider/sdkgen's tests type-check this file against that SDK.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as warmpool from "@warmpool/warmpool";

const config = new pulumi.Config();
const cluster = new k8s.Provider("cluster", { kubeconfig: config.requireSecret("kubeconfig") });

// The program's config keys less the cluster's, with the same defaults and checks.
const sandboxes = new warmpool.AutoscaledWarmPool("sandboxes", {
    namespace: "team-sandboxes",
    minReplicas: 1,
    maxReplicas: 3,
    kedaMode: config.get("kedaMode") ?? "install",
    agentSandboxMode: config.get("agentSandboxMode") ?? "install",
    sizing: { policy: "arrivals", bootSeconds: 8 },
}, { providers: [cluster] });

export const namespace = sandboxes.namespace;
export const pools = sandboxes.pools;
