package components

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

const (
	// FallbackFailureThreshold: consecutive failed reads before KEDA stops trusting the exporter.
	FallbackFailureThreshold = 3
)

// AutoscalerArgs targets the pool and reads the exporter.
type AutoscalerArgs struct {
	Namespace             pulumi.StringInput
	Name                  string
	PoolName              string
	MinReplicas           int
	MaxReplicas           int
	TargetValue           string
	ActivationTargetValue string // empty: KEDA's default (0)
	PollingInterval       int
	URL                   pulumi.StringInput
	// FallbackReplicas with behaviour currentReplicasIfHigher: 0 holds the current size while the
	// exporter cannot answer, maxReplicas fails open to full warm capacity.
	FallbackReplicas int
	// Headroom > 0 keeps that many warm sandboxes above demand through a KEDA
	// scalingModifiers formula: desired = ceil(claims / TargetValue) + Headroom.
	Headroom int
	// Sizing chooses the policy: SizingClaims (the zero value too) or SizingArrivals.
	Sizing Sizing
	// ScaleUp and ScaleDown are the HPA's behaviour; the zero value changes in one sync.
	ScaleUp, ScaleDown ScalingRules
	// DependsOn: the pool, the exporter and KEDA, so destroy removes the ScaledObject (and with it
	// the HPA that writes the pool) before any of them.
	DependsOn []pulumi.Resource
	Scope     Scope
}

// Autoscaler is the KEDA ScaledObject that sizes the pool by the claim count.
type Autoscaler struct {
	pulumi.ResourceState

	Name         pulumi.StringOutput
	ScaledObject *apiextensions.CustomResource
}

// TriggerTimeout is how long KEDA waits for the exporter's answer: the exporter's scrape
// deadline plus a second for the answer to travel, so the exporter's stale count reaches KEDA
// before KEDA gives up. It equals KEDA's default (3 s) and is set explicitly so a changed
// cluster-wide default cannot undercut it.
const TriggerTimeout = contract.ExporterScrapeDeadline + time.Second

// ClaimsTriggerName is the claims trigger's name in the headroom formula and in the arrivals
// formula rounded to whole nodes.
const ClaimsTriggerName = "claims"

// ModifiersTarget is the target of every scalingModifiers formula the program writes. KEDA uses
// the fallback of a ScaledObject with scalingModifiers only when this target parses as a positive
// integer (kedacore/keda v2.21 pkg/fallback HasValidFallback): with "1.5", or even "1.0", an
// exporter outage would reach the HPA as an error and the pool would have no fallback at all. So
// the formula carries the claims' own target, and every trigger it reads targets 1 too: KEDA's
// fallback value is replicas x the trigger's target, which the HPA then divides by this one.
const ModifiersTarget = "1"

// HeadroomFormula is the scalingModifiers formula for a headroom above demand: the claims in
// warm sandboxes (claims / target) plus headroom, so the HPA's ceil(value / ModifiersTarget)
// comes to ceil(claims / target) + headroom.
func HeadroomFormula(targetValue string, headroom int) string {
	t, err := strconv.ParseFloat(targetValue, 64)
	if err != nil || t <= 0 {
		t = 1 // Validate rejects a non-numeric or non-positive target before any resource exists.
	}
	if t == 1 {
		return fmt.Sprintf("%s + %d", ClaimsTriggerName, headroom)
	}
	return fmt.Sprintf("%s / %s + %d", ClaimsTriggerName, strconv.FormatFloat(t, 'f', -1, 64), headroom)
}

// modifiersActivation is the activation target of a headroom formula: the formula is in warm
// sandboxes, not claims, so a claims threshold a becomes a / target.
func modifiersActivation(activation, targetValue string) string {
	a, aerr := strconv.ParseFloat(activation, 64)
	t, terr := strconv.ParseFloat(targetValue, 64)
	if aerr != nil || terr != nil || t <= 0 {
		return activation // Validate rejects both before any resource exists.
	}
	return strconv.FormatFloat(a/t, 'f', -1, 64)
}

// NewAutoscaler creates the ScaledObject. AverageValue makes desired = ceil(claims / target), so with
// target 1 there is one warm sandbox per active claim, clamped to [min, max]; Value would multiply by
// the pool's ready count and compound.
func NewAutoscaler(ctx *pulumi.Context, name string, args *AutoscalerArgs, opts ...pulumi.ResourceOption) (*Autoscaler, error) {
	a := &Autoscaler{Name: pulumi.String(args.Name).ToStringOutput()}
	if err := ctx.RegisterComponentResource("warmpool:index:Autoscaler", args.Scope.Name(name), a, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	triggers, advanced := scaling(args)
	so, err := apiextensions.NewCustomResource(ctx, args.Scope.Name(args.Name), &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(contract.KedaAPIVersion),
		Kind:       pulumi.String(contract.ScaledObjectKind),
		Metadata: &metav1.ObjectMetaArgs{
			Name:      pulumi.String(args.Name),
			Namespace: args.Namespace.ToStringOutput(),
			Labels:    pulumi.StringMap{contract.PartOfLabel: pulumi.String(contract.ManagedByValue)},
		},
		OtherFields: kubernetes.UntypedArgs{
			"spec": pulumi.Map{
				"scaleTargetRef": pulumi.Map{
					"apiVersion": pulumi.String(contract.AgentSandboxExtensionsAPIVersion),
					"kind":       pulumi.String(contract.SandboxWarmPoolKind),
					"name":       pulumi.String(args.PoolName),
				},
				"minReplicaCount": pulumi.Int(args.MinReplicas),
				"maxReplicaCount": pulumi.Int(args.MaxReplicas),
				"pollingInterval": pulumi.Int(args.PollingInterval),
				"fallback": pulumi.Map{
					"failureThreshold": pulumi.Int(FallbackFailureThreshold),
					"replicas":         pulumi.Int(args.FallbackReplicas),
					// Never lower than what the pool has: an outage must not shrink warm capacity.
					"behavior": pulumi.String("currentReplicasIfHigher"),
				},
				"advanced": advanced,
				"triggers": triggers,
			},
		},
	}, args.Scope.Opts(args.Name, pulumi.Parent(a), pulumi.DependsOn(args.DependsOn))...)
	if err != nil {
		return nil, err
	}
	a.ScaledObject = so
	return a, ctx.RegisterResourceOutputs(a, pulumi.Map{"name": a.Name})
}

// scaling is the ScaledObject's triggers and its advanced section: the HPA's
// behaviour and, for headroom or arrivals sizing, the formula over the triggers.
func scaling(args *AutoscalerArgs) (pulumi.Array, pulumi.Map) {
	claims := metricsAPITrigger(args.URL, contract.DemandField, args.TargetValue)
	if args.ActivationTargetValue != "" {
		claims["metadata"].(pulumi.StringMap)["activationTargetValue"] = pulumi.String(args.ActivationTargetValue)
	}
	triggers := pulumi.Array{claims}
	advanced := pulumi.Map{"horizontalPodAutoscalerConfig": hpaBehavior(args.ScaleUp, args.ScaleDown, args.MaxReplicas)}
	formula, activation := "", args.ActivationTargetValue
	switch {
	case args.Sizing.Policy == SizingArrivals:
		// The formula reads the two arrival counts by name; the held claims enter it only to
		// round to whole nodes (an adopted sandbox leaves the pool, so spec.replicas counts only
		// spares, but it keeps its slot on the node).
		short, long := metricsAPITrigger(args.URL, ArrivalsShortTrigger, ModifiersTarget), metricsAPITrigger(args.URL, ArrivalsLongTrigger, ModifiersTarget)
		short["name"], long["name"] = pulumi.String(ArrivalsShortTrigger), pulumi.String(ArrivalsLongTrigger)
		triggers = pulumi.Array{short, long}
		if args.Sizing.RoundsToNodes() {
			held := metricsAPITrigger(args.URL, contract.DemandField, ModifiersTarget)
			held["name"] = pulumi.String(ClaimsTriggerName)
			triggers = append(triggers, held)
		}
		for i, w := range args.Sizing.Schedule {
			triggers = append(triggers, scheduleTrigger(i, w))
		}
		formula = ArrivalsFormula(args.Sizing, args.Headroom)
	case args.Headroom > 0:
		// The formula names the trigger and divides by the claims' target itself (see
		// ModifiersTarget); KEDA's fallback still applies: while it is active the formula is
		// bypassed.
		claims["metadata"].(pulumi.StringMap)["targetValue"] = pulumi.String(ModifiersTarget)
		claims["name"] = pulumi.String(ClaimsTriggerName)
		formula, activation = HeadroomFormula(args.TargetValue, args.Headroom), modifiersActivation(args.ActivationTargetValue, args.TargetValue)
	default:
		return triggers, advanced
	}
	modifiers := pulumi.Map{
		"formula":    pulumi.String(formula),
		"target":     pulumi.String(ModifiersTarget),
		"metricType": pulumi.String("AverageValue"),
	}
	if args.ActivationTargetValue != "" {
		modifiers["activationTarget"] = pulumi.String(activation)
	}
	advanced["scalingModifiers"] = modifiers
	return triggers, advanced
}

// scheduleTrigger is a schedule window as a KEDA cron trigger: its warm count inside the
// window, 0 outside, under the name the formula reads.
func scheduleTrigger(i int, w schedule.Window) pulumi.Map {
	return pulumi.Map{
		"type": pulumi.String("cron"),
		"name": pulumi.String(schedule.TriggerName(i)),
		"metadata": pulumi.StringMap{
			"timezone":        pulumi.String(w.Timezone),
			"start":           pulumi.String(w.Start),
			"end":             pulumi.String(w.End),
			"desiredReplicas": pulumi.String(strconv.Itoa(w.Warm)),
		},
	}
}

// metricsAPITrigger reads one JSON field of the exporter's answer.
func metricsAPITrigger(url pulumi.StringInput, valueLocation, targetValue string) pulumi.Map {
	return pulumi.Map{
		"type":       pulumi.String("metrics-api"),
		"metricType": pulumi.String("AverageValue"),
		"metadata": pulumi.StringMap{
			"url":           url,
			"valueLocation": pulumi.String(valueLocation),
			"targetValue":   pulumi.String(targetValue),
			"format":        pulumi.String("json"),
			// Milliseconds; see TriggerTimeout.
			"timeout": pulumi.String(strconv.FormatInt(TriggerTimeout.Milliseconds(), 10)),
		},
	}
}
