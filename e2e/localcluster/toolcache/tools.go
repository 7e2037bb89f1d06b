package toolcache

import (
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// A tool is one upstream program (or several from one module) that the local
// control plane runs. Each has its own small Go module under tools/<dir>, whose
// committed go.sum fixes every dependency, so a build is reproducible from the
// Go module proxy alone.
type tool struct {
	dir      string // folder under tools/
	module   string // the upstream module the binaries come from
	version  string
	commands []command
	ldflags  []string
	// prepare writes generated inputs into the tool's folder before the build.
	prepare func(toolDir, moduleDir string) error
	// data copies files the programs need at run time (CRDs, stages) out of
	// the upstream module into the cache entry.
	data func(moduleDir, dataDir string) error
	// tags are the build tags (go build -tags).
	tags string
	// patches are files in the tool's folder, unified diffs (-p1) applied to a
	// scratch copy of the upstream module, which the build then uses through a
	// replace directive in a copy of go.mod: the committed go.mod stays as it is
	// and the module cache is never written.
	patches []string
}

type command struct {
	pkg    string // package to build, "." for the tool module's own main
	binary string
}

const (
	// The pins live in contract.Pins, beside the program's, with why they differ.
	kubernetesVersion = contract.KubernetesModule
	kedaVersion       = contract.KedaModule
	agentSandboxVer   = contract.AgentSandboxModule
	pulumiVersion     = contract.PulumiModule
	containerdVersion = contract.ContainerdModule
	gvisorVersion     = contract.GVisorModule
	corednsVersion    = contract.CoreDNSModule
	prometheusVersion = contract.PrometheusModule
	karpenterVersion  = contract.KarpenterModule
	// ProviderVersion is the version the Kubernetes provider reports, and the
	// one the Pulumi program's SDK (pulumi-kubernetes/sdk/v4 v4.32.0) asks for.
	ProviderVersion = contract.PulumiKubernetesProvider
)

// Without a version, clients cannot parse the server's and refuse it; the
// node's binaries get the same, so the kubelet reports v1.36.3.
var kubernetesLdflags = []string{
	"-X k8s.io/component-base/version.gitVersion=" + kubernetesVersion,
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=36",
	"-X k8s.io/component-base/version.gitTreeState=clean",
}

func tools() []tool {
	return []tool{
		{
			dir: "etcd", module: "go.etcd.io/etcd/server/v3", version: contract.EtcdModule,
			commands: []command{{"go.etcd.io/etcd/server/v3", "etcd"}},
		},
		{
			dir: "kubernetes", module: "k8s.io/kubernetes", version: kubernetesVersion,
			commands: []command{
				{"k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"},
				{"k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"},
				{"k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"},
			},
			ldflags: kubernetesLdflags,
		},
		{
			dir: "kwok", module: "sigs.k8s.io/kwok", version: contract.KwokModule,
			commands: []command{{"sigs.k8s.io/kwok/cmd/kwok", "kwok"}},
			data:     copyKwokStages,
		},
		{
			dir: "agent-sandbox", module: "sigs.k8s.io/agent-sandbox", version: agentSandboxVer,
			commands: []command{{"sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller", "agent-sandbox-controller"}},
			data:     copyGlob("k8s/crds/*.yaml", "crds"),
		},
		{
			dir: "keda", module: "github.com/kedacore/keda/v2", version: kedaVersion,
			commands: []command{
				{"github.com/kedacore/keda/v2/cmd/operator", "keda-operator"},
				{"github.com/kedacore/keda/v2/cmd/adapter", "keda-adapter"},
			},
			ldflags: []string{"-X github.com/kedacore/keda/v2/version.Version=" + strings.TrimPrefix(kedaVersion, "v")},
			data:    copyGlob("config/crd/bases/*.yaml", "crds"),
		},
		{
			dir: "kubernetes-node", module: "k8s.io/kubernetes", version: kubernetesVersion,
			commands: []command{
				{"k8s.io/kubernetes/cmd/kubelet", "kubelet"},
				{"k8s.io/kubernetes/cmd/kube-proxy", "kube-proxy"},
			},
			ldflags: kubernetesLdflags,
		},
		{
			dir: "containerd", module: "github.com/containerd/containerd/v2", version: containerdVersion,
			commands: []command{
				{"github.com/containerd/containerd/v2/cmd/containerd", "containerd"},
				{"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2", "containerd-shim-runc-v2"},
				{"github.com/containerd/containerd/v2/cmd/ctr", "ctr"},
			},
			// The snapshotters that need cgo or kernel headers are left out;
			// overlayfs and native remain.
			tags:    "no_btrfs no_devmapper no_zfs",
			ldflags: []string{"-X github.com/containerd/containerd/v2/version.Version=" + containerdVersion},
		},
		{
			dir: "gvisor", module: "gvisor.dev/gvisor", version: gvisorVersion,
			commands: []command{
				{"gvisor.dev/gvisor/runsc", "runsc"},
				{"gvisor.dev/gvisor/shim", "containerd-shim-runsc-v1"},
			},
			patches: []string{"shim-oom-score-permission.patch"},
		},
		{
			// Only the plugins the cluster DNS uses (tools/coredns/main.go).
			dir: "coredns", module: "github.com/coredns/coredns", version: corednsVersion,
			commands: []command{{".", "coredns"}},
		},
		{
			// Karpenter's core controllers over its KWOK cloud provider
			// (sigs.k8s.io/karpenter kwok/main.go): it creates the Node of each
			// NodeClaim itself, and our KWOK plays its kubelet. Its CRDs are
			// kwok/charts/crds (pkg/apis/crds plus hack/kwok/requirements.sh's
			// rule admitting the karpenter.kwok.sh labels: the Makefile's
			// "cp -r pkg/apis/crds kwok/charts") and KWOKNodeClass's
			// (kwok/apis/crds). The patch binds its metrics and health servers
			// to loopback (upstream: every interface, no flag for the host).
			dir: "karpenter", module: "sigs.k8s.io/karpenter", version: karpenterVersion,
			commands: []command{{"sigs.k8s.io/karpenter/kwok", "karpenter"}},
			ldflags:  []string{"-X sigs.k8s.io/karpenter/pkg/operator.Version=" + karpenterVersion},
			data:     copyGlobs("crds", "kwok/charts/crds/*.yaml", "kwok/apis/crds/*.yaml"),
			patches:  []string{"loopback-bind.patch"},
		},
		{
			dir: "pulumi", module: "github.com/pulumi/pulumi/pkg/v3", version: pulumiVersion,
			commands: []command{{"github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", "pulumi"}},
			ldflags:  []string{"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=" + pulumiVersion},
		},
		{
			// The YAML language host: the package's YAML consumer runs through the real CLI.
			dir: "pulumi-yaml", module: "github.com/pulumi/pulumi-yaml", version: contract.PulumiYAMLModule,
			commands: []command{{"github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml", "pulumi-language-yaml"}},
		},
		{
			dir: "pulumi-kubernetes", module: "github.com/pulumi/pulumi-kubernetes/provider/v4",
			version:  "v4.0.0-20260115033456-f47bc2d6f199",
			commands: []command{{".", "pulumi-resource-kubernetes"}},
			ldflags:  []string{"-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=" + ProviderVersion},
			prepare:  writeProviderSchema,
		},
		{
			// promtool only: it unit-tests the stack's alerting rules (`promtool test rules`).
			// Module v0.316.0 is Prometheus 3.16.0 (the module's v0.3MM.P tags mirror v3.MM.P).
			dir: "prometheus", module: "github.com/prometheus/prometheus", version: prometheusVersion,
			commands: []command{{"github.com/prometheus/prometheus/cmd/promtool", "promtool"}},
			ldflags: []string{
				"-X github.com/prometheus/common/version.Version=" + contract.PrometheusRelease,
				"-X github.com/prometheus/common/version.Branch=" + contract.PrometheusModule,
			},
		},
		{
			// The Prometheus server, from the same module and version as promtool: advise's live
			// test backfills a claim history with promtool and reads it back through the server's
			// HTTP API (history.FromPrometheus). A tool module of its own (tools/prometheus-server,
			// its go.sum a superset of promtool's at the same versions), so that adding it left
			// promtool's cache key as it was; the two builds share Go's build cache.
			dir: "prometheus-server", module: "github.com/prometheus/prometheus", version: prometheusVersion,
			commands: []command{{"github.com/prometheus/prometheus/cmd/prometheus", "prometheus"}},
			ldflags: []string{
				"-X github.com/prometheus/common/version.Version=" + contract.PrometheusRelease,
				"-X github.com/prometheus/common/version.Branch=" + contract.PrometheusModule,
			},
		},
		{
			// kubectl, at the control plane's release and with its version linked in (kubectl
			// version --client reports the pin). A tool module of its own (tools/kubectl, the same
			// replace block as tools/kubernetes), so that adding it left the control plane's cache
			// key as it was; the two builds share Go's build cache.
			dir: "kubectl", module: "k8s.io/kubernetes", version: kubernetesVersion,
			commands: []command{{"k8s.io/kubernetes/cmd/kubectl", "kubectl"}},
			ldflags:  kubernetesLdflags,
		},
		{
			// kube-state-metrics: the HPA and pod metrics the alerting rules read, from the local
			// control plane. Its main package is the module's root. The link flags are its
			// Makefile's (version.Version is the tag; ClientGoVersion labels its build-info metric).
			dir: "kube-state-metrics", module: "k8s.io/kube-state-metrics/v2", version: contract.KubeStateMetricsModule,
			commands: []command{{"k8s.io/kube-state-metrics/v2", "kube-state-metrics"}},
			ldflags: []string{
				"-X github.com/prometheus/common/version.Version=" + contract.KubeStateMetricsModule,
				"-X k8s.io/kube-state-metrics/v2/pkg/app.ClientGoVersion=" + kubeStateMetricsClientGo,
			},
		},
	}
}

// kubeStateMetricsClientGo is the k8s.io/client-go that tools/kube-state-metrics/go.mod resolves
// (its Makefile reads it with go list; a test holds the two together).
const kubeStateMetricsClientGo = "v0.36.3"

// The tools by who needs them, as names for Ensure.
var (
	// ControlPlane is what localcluster.Start runs.
	ControlPlane = []string{"etcd", "kubernetes", "kwok", "agent-sandbox", "keda"}
	// Node is what a real node runs (localcluster.Options.RealNodes).
	Node = []string{"kubernetes-node", "containerd", "gvisor", "coredns"}
	// NodeAutoscaler is what launches simulated nodes on demand
	// (localcluster.Options.Karpenter): Karpenter with its KWOK cloud
	// provider, whose nodes KWOK plays.
	NodeAutoscaler = []string{"karpenter"}
	// Pulumi is the Pulumi CLI and the Kubernetes provider, which only the Pulumi runs need.
	Pulumi = []string{"pulumi", "pulumi-kubernetes"}
	// PulumiYAML is the YAML language host, for the package's YAML consumer, beside Pulumi.
	PulumiYAML = []string{"pulumi-yaml"}
	// Monitoring is promtool, which the alerting rules' tests run.
	Monitoring = []string{"prometheus"}
	// PrometheusServer is promtool and the Prometheus server: a history backfilled with the one
	// and served by the other (advise's live test).
	PrometheusServer = []string{"prometheus", "prometheus-server"}
	// Kubectl is for the demo, which prints kubectl commands so that a newcomer can explore the
	// local cluster without installing kubectl.
	Kubectl = []string{"kubectl"}
	// KubeStateMetrics is what the live alert table runs against the local control plane.
	KubeStateMetrics = []string{"kube-state-metrics"}
)
