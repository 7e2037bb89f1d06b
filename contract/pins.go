package contract

import (
	"fmt"
	"strings"
)

// Upstream versions and images the project pins. Pins lists each one once, as the Pulumi program
// deploys it and as the local control plane (e2e/localcluster) runs it; where the two differ,
// the entry says why, and pins_test.go fails when they differ without a reason or when a pin
// here disagrees with the go.mod that builds it.
const (
	// AgentSandboxRelease is the agent-sandbox release whose manifest the program installs.
	AgentSandboxRelease = "v1.0.10"
	// AgentSandboxModule is the agent-sandbox Go module the local control plane builds.
	AgentSandboxModule = "v0.5.6"

	KedaChartVersion = "2.21.0"
	KedaModule       = "v2.21.0"

	// KubernetesVersion is the EKS version (MAJOR.MINOR): Nitro Sandboxes need 1.36 or newer.
	KubernetesVersion = "1.36"
	KubernetesModule  = "v1.36.3"

	// PulumiModule is the Pulumi engine and CLI the local control plane builds; the program's
	// SDK (root go.mod) is the same version.
	PulumiModule = "v3.274.1"
	// PulumiKubernetesProvider is the provider version the program's SDK asks for
	// (pulumi-kubernetes/sdk/v4 v4.32.0) and the version the locally built provider reports.
	PulumiKubernetesProvider = "4.32.0"

	// PulumiYAMLModule is Pulumi YAML's language host (pulumi-language-yaml), which runs the
	// package's YAML consumer (examples/yaml) through the real CLI; the newest the proxy
	// serves. It builds against its own, older Pulumi SDK (its go.mod), as a released plugin does.
	PulumiYAMLModule = "v1.25.0"

	EtcdModule = "v3.6.16"
	KwokModule = "v0.8.0"
	// ContainerdModule and GVisorModule run the local real nodes' pods. gVisor tags no Go
	// module releases (its "go" branch is the module): GVisorModule is what the module proxy
	// resolved gvisor.dev/gvisor@latest to.
	ContainerdModule = "v2.4.2"
	GVisorModule     = "v0.0.0-20260905035102-160fafc42237"
	// CoreDNSModule is the local real nodes' cluster DNS (EKS runs its own CoreDNS add-on).
	CoreDNSModule = "v1.15.0"
	// PrometheusModule is the Prometheus module promtool is built from, to test the stack's
	// alerting rules (and the server advise's live test reads a history from);
	// PrometheusRelease is the release it is (the module's v0.3MM.P tags
	// are Prometheus v3.MM.P). The newest whose go.mod asks for no newer Go than ours (go 1.26.7).
	PrometheusModule  = "v0.316.0"
	PrometheusRelease = "3.16.0"
	// KarpenterModule is the node autoscaler of the local control plane (its KWOK cloud
	// provider). The newest release this machine's Go (1.26.8) builds: v1.15.0's go.mod says
	// go 1.26.9 and v1.14.3's go 1.26.10; v1.14.1's says go 1.26.6.
	KarpenterModule = "v1.14.1"
	// KubeStateMetricsModule is kube-state-metrics, which the live alert table runs against the
	// local control plane: the release whose metrics the alerting rules are written against
	// (monitoring/rules.go). Its client-go (v0.36.3) is the Kubernetes pin's release.
	KubeStateMetricsModule = "v2.20.0"

	// WarmPodImage is what a warm sandbox runs (it only has to stay up).
	WarmPodImage = "public.ecr.aws/docker/library/busybox:1.36.1"
	// ExporterGoImage runs the exporter from source; the patch release the module is built with.
	ExporterGoImage = "public.ecr.aws/docker/library/golang:1.26.8-alpine"
)

// Where the program downloads its two pinned installs from, on a team's first `pulumi up`
// (checkpins checks both before that).
const (
	// KedaChartRepo is the Helm repository of the kedacore/keda chart.
	KedaChartRepo = "https://kedacore.github.io/charts"
	// KedaChartName is the chart's name in that repository.
	KedaChartName = "keda"
)

// AgentSandboxManifestURL is the agent-sandbox release asset install mode applies.
func AgentSandboxManifestURL(version string) string {
	return fmt.Sprintf("https://github.com/kubernetes-sigs/agent-sandbox/releases/download/%s/sandbox-with-extensions.yaml", version)
}

// Pin is one pinned upstream piece.
type Pin struct {
	Name string
	// Program is the version the Pulumi program deploys or builds against; "" when it has none.
	Program string
	// ProgramModule, when set, is the module of the root go.mod that Program is the version of.
	ProgramModule string
	// LocalControlPlane is the version the local control plane runs; "" when it runs none.
	LocalControlPlane string
	// LocalModule and LocalToolDir, when set: e2e/localcluster/toolcache/tools/<LocalToolDir>/go.mod
	// requires LocalModule at LocalControlPlane.
	LocalModule  string
	LocalToolDir string
	// Why the two differ; required when they do.
	Why string
}

// Pins is the one list of every pin.
var Pins = []Pin{
	{
		Name: "agent-sandbox", Program: AgentSandboxRelease, LocalControlPlane: AgentSandboxModule,
		LocalModule: "sigs.k8s.io/agent-sandbox", LocalToolDir: "agent-sandbox",
		Why: "the local control plane builds the controller from its Go module, and the Go module proxy serves " +
			"sigs.k8s.io/agent-sandbox v0.5.6 but not v1.0.10 (403, not available); the program installs the v1.0.10 " +
			"release manifest. Both serve every extensions.agents.x-k8s.io resource as v1beta1, and the warm pool's " +
			"selector came out the same as the blueprint shows for v1.0.10",
	},
	{
		Name: "KEDA", Program: KedaChartVersion, LocalControlPlane: KedaModule,
		LocalModule: "github.com/kedacore/keda/v2", LocalToolDir: "keda",
	},
	{
		Name: "Kubernetes", Program: KubernetesVersion, LocalControlPlane: KubernetesModule,
		LocalModule: "k8s.io/kubernetes", LocalToolDir: "kubernetes",
	},
	{
		Name: "Pulumi engine and SDK", Program: PulumiModule, ProgramModule: "github.com/pulumi/pulumi/sdk/v3",
		LocalControlPlane: PulumiModule, LocalModule: "github.com/pulumi/pulumi/pkg/v3", LocalToolDir: "pulumi",
	},
	{
		// The local provider is built from a pseudo-version of provider/v4 (the published module
		// tags lag the releases) with the release's version linked in; see
		// e2e/localcluster/toolcache/tools.go.
		Name: "Pulumi Kubernetes provider", Program: PulumiKubernetesProvider, ProgramModule: "github.com/pulumi/pulumi-kubernetes/sdk/v4",
		LocalControlPlane: PulumiKubernetesProvider,
	},
	{
		Name: "Pulumi YAML", LocalControlPlane: PulumiYAMLModule, LocalModule: "github.com/pulumi/pulumi-yaml", LocalToolDir: "pulumi-yaml",
		Why: "the program is Go; Pulumi YAML runs only the package's YAML consumer, as a team's own YAML stack would",
	},
	{Name: "warm pod image", Program: WarmPodImage, LocalControlPlane: WarmPodImage},
	{
		Name: "exporter's Go image", Program: ExporterGoImage,
		Why: "locally the exporter runs as a process built by the host's Go, not in a pod",
	},
	{
		Name: "etcd", LocalControlPlane: EtcdModule, LocalModule: "go.etcd.io/etcd/server/v3", LocalToolDir: "etcd",
		Why: "EKS runs its own control plane; the program deploys none",
	},
	{
		Name: "KWOK", LocalControlPlane: KwokModule, LocalModule: "sigs.k8s.io/kwok", LocalToolDir: "kwok",
		Why: "simulated nodes exist only on the local control plane",
	},
	{
		Name: "containerd", LocalControlPlane: ContainerdModule, LocalModule: "github.com/containerd/containerd/v2", LocalToolDir: "containerd",
		Why: "EKS Auto Mode's nodes bring their own container runtime; the program deploys none",
	},
	{
		Name: "CoreDNS", LocalControlPlane: CoreDNSModule, LocalModule: "github.com/coredns/coredns", LocalToolDir: "coredns",
		Why: "EKS runs CoreDNS as its own add-on; the program deploys none",
	},
	{
		Name: "Karpenter", LocalControlPlane: KarpenterModule, LocalModule: "sigs.k8s.io/karpenter", LocalToolDir: "karpenter",
		Why: "EKS Auto Mode runs and upgrades Karpenter itself; the program deploys none. Locally: its KWOK cloud provider",
	},
	{
		Name: "gVisor", LocalControlPlane: GVisorModule, LocalModule: "gvisor.dev/gvisor", LocalToolDir: "gvisor",
		Why: "the local stand-in for Auto Mode's VM-isolated runtime (no VM can run on the test machines)",
	},
	{
		Name: "promtool", LocalControlPlane: PrometheusModule, LocalModule: "github.com/prometheus/prometheus", LocalToolDir: "prometheus",
		Why: "only tests the alerting rules (promtool test rules); the program renders the rules for the team's own Prometheus",
	},
	{
		Name: "Prometheus server", LocalControlPlane: PrometheusModule, LocalModule: "github.com/prometheus/prometheus", LocalToolDir: "prometheus-server",
		Why: "only serves a backfilled claim history to advise's live test (history.FromPrometheus); the program reads the team's own Prometheus",
	},
	{
		Name: "kubectl", LocalControlPlane: KubernetesModule, LocalModule: "k8s.io/kubernetes", LocalToolDir: "kubectl",
		Why: "only a client for exploring the local cluster (the demo prints kubectl commands); the program deploys none",
	},
	{
		Name: "kube-state-metrics", LocalControlPlane: KubeStateMetricsModule, LocalModule: "k8s.io/kube-state-metrics/v2", LocalToolDir: "kube-state-metrics",
		Why: "the alerting rules read the team's own kube-state-metrics (kube-prometheus-stack ships it); the program deploys none. " +
			"Locally it feeds the live alert table from the local control plane",
	},
}

// SameVersion reports whether two pins name the same version, to the precision of the less
// precise one: "2.21.0" and "v2.21.0" are the same, and so are "1.36" and "v1.36.3". Image
// references (with a ':') must be equal: busybox:1.36 and busybox:1.36.1 are two images.
func SameVersion(a, b string) bool {
	if strings.Contains(a, ":") || strings.Contains(b, ":") {
		return a == b
	}
	a, b = trimV(a), trimV(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || (a != "" && len(b) > len(a) && b[:len(a)] == a && b[len(a)] == '.')
}

func trimV(s string) string {
	if len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9' {
		return s[1:]
	}
	return s
}
