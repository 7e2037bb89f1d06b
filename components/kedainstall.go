package components

import (
	"fmt"
	"reflect"

	corev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/core/v1"
	helmv4 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/helm/v4"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// KedaArgs selects installing the pinned chart or adopting the KEDA the cluster has.
type KedaArgs struct {
	Mode         string // ModeInstall, ModeAdopt or ModeShared
	ChartVersion string
	// Values are the chart values the install sets; refused in adopt mode (a shared install is
	// never re-valued).
	Values KedaValues
	Scope  Scope
}

// Keda is the KEDA install the ScaledObject needs.
type Keda struct {
	pulumi.ResourceState

	Namespace pulumi.StringOutput
	// Installed is what a dependent that KEDA must outlive depends on: the Helm chart (install), a
	// remote component whose own URN the SDK records and whose resources the engine counts as
	// dependencies (pulumi/pulumi pkg/resource/graph/dependency_graph.go, DependenciesOf), or the
	// CRD reads (adopt). Not the Keda component itself: the Go SDK replaces a local component
	// with the children it has registered so far, which races with their registration.
	Installed []pulumi.Resource
}

// ServiceMonitorCRD is the Prometheus Operator's ServiceMonitor, which the chart's switch needs.
const ServiceMonitorCRD = "servicemonitors.monitoring.coreos.com"

// NewKeda installs kedacore/keda at the pinned chart version (install) or only checks that
// scaledobjects.keda.sh exists (adopt): KEDA is shared, so adopt never upgrades, re-values or moves it.
func NewKeda(ctx *pulumi.Context, name string, args *KedaArgs, opts ...pulumi.ResourceOption) (*Keda, error) {
	k := &Keda{Namespace: pulumi.String(contract.KedaNamespace).ToStringOutput()}
	if err := ctx.RegisterComponentResource("warmpool:index:Keda", args.Scope.Name(name), k, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	if args.Mode != ModeInstall && !reflect.DeepEqual(args.Values, KedaValues{}) {
		return nil, fmt.Errorf("KEDA's install values are set, but kedaMode is adopt: an adopted KEDA is shared and never re-valued; remove them, or install KEDA with the stack (kedaMode=install)")
	}
	switch args.Mode {
	case ModeInstall:
		if args.Values.ServiceMonitor {
			how := "install the Prometheus Operator (or kube-prometheus-stack) first, or turn the ServiceMonitors off"
			if _, err := requireCRDs(ctx, args.Scope, k, "the Prometheus Operator", how, RequiredCRD{Name: ServiceMonitorCRD, Version: "v1"}); err != nil {
				return nil, err
			}
		}
		ns, err := corev1.NewNamespace(ctx, args.Scope.Name(contract.KedaNamespace), &corev1.NamespaceArgs{
			Metadata: &metav1.ObjectMetaArgs{
				Name:   pulumi.String(contract.KedaNamespace),
				Labels: pulumi.StringMap{contract.ManagedByLabel: pulumi.String(contract.ManagedByValue)},
			},
		}, args.Scope.Opts(contract.KedaNamespace, pulumi.Parent(k))...)
		if err != nil {
			return nil, err
		}
		var values pulumi.MapInput // nil: the chart's defaults, and no values input at all
		if v := args.Values.chartValues(); v != nil {
			values = v
		}
		chart, err := helmv4.NewChart(ctx, args.Scope.Name(name), &helmv4.ChartArgs{
			Name:           pulumi.String("keda"),
			Chart:          pulumi.String(contract.KedaChartName),
			Version:        pulumi.String(args.ChartVersion),
			Namespace:      pulumi.String(contract.KedaNamespace),
			RepositoryOpts: &helmv4.RepositoryOptsArgs{Repo: pulumi.String(contract.KedaChartRepo)},
			Values:         values,
		}, args.Scope.Opts(name, pulumi.Parent(k), pulumi.DependsOn([]pulumi.Resource{ns}))...)
		if err != nil {
			return nil, err
		}
		k.Installed = []pulumi.Resource{chart}
	case ModeAdopt:
		how := fmt.Sprintf("install it yourself (helm install keda kedacore/keda --repo %s --namespace %s --create-namespace --version %s) or set kedaMode=install",
			contract.KedaChartRepo, contract.KedaNamespace, contract.KedaChartVersion)
		reads, err := requireCRDs(ctx, args.Scope, k, "KEDA", how, RequiredCRD{Name: contract.ScaledObjectCRD, Version: contract.KedaVersion})
		if err != nil {
			return nil, err
		}
		k.Installed = reads
	case ModeShared:
	default:
		return nil, fmt.Errorf("KEDA mode %q is not %s or %s", args.Mode, ModeInstall, ModeAdopt)
	}
	return k, ctx.RegisterResourceOutputs(k, pulumi.Map{"namespace": k.Namespace})
}
