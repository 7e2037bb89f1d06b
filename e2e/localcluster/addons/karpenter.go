package addons

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// DefaultInstanceTypes are x86 compute- and general-purpose sizes of the kind
// Auto Mode's general-purpose pool launches (c and m families); c6a.large is
// the instance of the published launch figures (awslabs/node-latency-for-k8s).
// Prices are us-east-1 on-demand Linux list prices per hour; only their order
// decides what Karpenter launches.
var DefaultInstanceTypes = []procspec.InstanceType{
	{Name: "c6a.large", CPU: "2", Memory: "4Gi", PricePerHour: 0.0765},
	{Name: "c6a.xlarge", CPU: "4", Memory: "8Gi", PricePerHour: 0.153},
	{Name: "c6a.2xlarge", CPU: "8", Memory: "16Gi", PricePerHour: 0.306},
	{Name: "m6a.large", CPU: "2", Memory: "8Gi", PricePerHour: 0.0864},
	{Name: "m6a.xlarge", CPU: "4", Memory: "16Gi", PricePerHour: 0.1728},
}

// KarpenterOptions turn on Karpenter (Options.Karpenter): the control plane
// runs it with its KWOK cloud provider and applies a KWOKNodeClass
// (KarpenterNodeClass) and a NodePool (KarpenterNodePool) of it, so that a
// pod no node fits makes Karpenter launch a simulated node, which KWOK runs.
type KarpenterOptions struct {
	// LaunchDelay is the time from a NodeClaim to its Node (the node
	// class's nodeRegistrationDelay), in whole seconds; default 30 s, the
	// upper end of the c6a.large launch-to-Ready figures
	// (24-30 s, awslabs/node-latency-for-k8s; about 30 s per a Karpenter
	// maintainer in aws/karpenter-provider-aws#4548). Karpenter's batching
	// (1-10 s) comes on top, as on EKS.
	LaunchDelay time.Duration
	// ConsolidateAfter is the node pool's consolidateAfter, in whole seconds;
	// default 30 s.
	ConsolidateAfter time.Duration
	// InstanceTypes are what Karpenter may launch; default DefaultInstanceTypes.
	InstanceTypes []procspec.InstanceType
	// Debug runs Karpenter at LOG_LEVEL=debug: its log then has every
	// scheduling simulation with the pending pods it saw.
	Debug bool
}

// Karpenter's resources (Options.Karpenter).
var (
	NodePoolGVR      = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	NodeClaimGVR     = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	KWOKNodeClassGVR = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// The names of the objects Options.Karpenter applies.
const (
	KarpenterNodeClass = "default"
	KarpenterNodePool  = "general-purpose"
)

// WithDefaults fills what o leaves unset and refuses what Karpenter or its
// CRDs would refuse later (durations in whole seconds, instance types it
// cannot size or price).
func (o KarpenterOptions) WithDefaults() (KarpenterOptions, error) {
	if o.LaunchDelay == 0 {
		o.LaunchDelay = 30 * time.Second
	}
	if o.ConsolidateAfter == 0 {
		o.ConsolidateAfter = 30 * time.Second
	}
	if o.InstanceTypes == nil {
		o.InstanceTypes = DefaultInstanceTypes
	}
	for name, d := range map[string]time.Duration{"LaunchDelay": o.LaunchDelay, "ConsolidateAfter": o.ConsolidateAfter} {
		if d < 0 || d%time.Second != 0 {
			return o, fmt.Errorf("Karpenter.%s is %s: want whole seconds (the CRDs' pattern)", name, d)
		}
	}
	if len(o.InstanceTypes) == 0 {
		return o, fmt.Errorf("Karpenter.InstanceTypes is empty: Karpenter could launch nothing")
	}
	for _, t := range o.InstanceTypes {
		if t.Name == "" || t.CPU == "" || t.Memory == "" || t.PricePerHour <= 0 {
			return o, fmt.Errorf("Karpenter.InstanceTypes: %+v: want a name, CPU, memory and a price above 0", t)
		}
	}
	return o, nil
}

// karpenterNodeClass is the KWOKNodeClass the node pool launches with: the
// launch delay is its nodeRegistrationDelay, from NodeClaim to Node.
func karpenterNodeClass(name string, launchDelay time.Duration) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"nodeRegistrationDelay": launchDelay.String()},
	}
}

// karpenterNodePool is a NodePool of nodeClass's nodes: linux/amd64 on
// demand, consolidated when empty or underutilized after consolidateAfter.
// Its nodes carry procspec.SandboxNodeLabel, so the simulated isolated RuntimeClass
// schedules sandboxes onto them.
func karpenterNodePool(name, nodeClass string, consolidateAfter time.Duration) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{procspec.SandboxNodeLabel: "true"}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": nodeClass},
					"requirements": []any{
						map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
						map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}},
						map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}},
					},
				},
			},
			"disruption": map[string]any{
				"consolidationPolicy": "WhenEmptyOrUnderutilized",
				// Required by v1.14.1's CRD (optional from v1.15.0).
				"consolidateAfter": consolidateAfter.String(),
			},
		},
	}
}

// karpenterNodePoolReady waits for Karpenter to call its node pool Ready:
// the node class Ready (its CRD's default status), the pool validated.
func karpenterNodePoolReady(ctx context.Context, pl *plane.Plane) error {
	return pl.WaitFor(ctx, "NodePool "+KarpenterNodePool+" to be Ready (Karpenter)", 60*time.Second, func(ctx context.Context) (bool, error) {
		if p := pl.Procs.Get("karpenter"); p != nil && p.Exited() {
			return false, poll.Stop(p.ExitedError())
		}
		np, err := pl.Dynamic.Resource(NodePoolGVR).Get(ctx, KarpenterNodePool, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !plane.ConditionTrue(np, "Ready") {
			return false, fmt.Errorf("NodePool not Ready: %v", np.Object["status"])
		}
		return true, nil
	})
}
