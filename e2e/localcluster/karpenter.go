package localcluster

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Karpenter v1.14.1 with its KWOK cloud provider (sigs.k8s.io/karpenter
// kwok/main.go), read from the module's source:
//   - Create (kwok/cloudprovider/cloudprovider.go) resolves the NodeClaim's
//     KWOKNodeClass, sleeps its spec.nodeRegistrationDelay and creates the Node
//     itself: providerID kwok://<name>, annotation and label
//     kwok.x-k8s.io/node=fake, taint karpenter.sh/unregistered:NoExecute,
//     capacity and allocatable from the instance type, no conditions. KWOK
//     (kwok.go: --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake)
//     makes it Ready by its node-initialize stage; Karpenter then registers it
//     (the taint goes) and initializes it. So Karpenter needs KWOK running,
//     with or without simulated nodes of our own.
//   - Its flags are one flag set of its own (pkg/operator/injection/
//     injection.go) over os.Args: --kubeconfig is not one of them (an unknown
//     flag panics); the kubeconfig comes from KUBECONFIG (ctrl.GetConfigOrDie).
//   - Leader election is on by default and, out of a cluster, has no namespace
//     to put its Lease in: off, as for every controller here (one replica).
//   - No webhook in the KWOK provider (its Makefile: "Webhooks are currently
//     not supported in the kwok provider"), no namespace of its own.
//   - /readyz on the health port checks the caches and that NodePool and
//     NodeClaim are served (pkg/operator/operator.go).

// karpenterSettings are what Karpenter's command line depends on.
type karpenterSettings struct {
	Binary     string
	Kubeconfig string
	// MetricsPort and HealthPort are bound on 127.0.0.1 (the tool's
	// loopback-bind.patch; upstream binds every interface).
	MetricsPort, HealthPort int
	// InstanceTypesFile is where InstanceTypes are written for
	// --instance-types-file-path; without the flag Karpenter offers its 144
	// made-up types (kwok/cloudprovider/instance_types.json), Windows and
	// arm64 among them.
	InstanceTypesFile string
	InstanceTypes     []InstanceType
	// BatchIdle and BatchMax are Karpenter's provisioning batch window (its
	// defaults: 1 s without a new pending pod closes it, 10 s at most); 0
	// leaves the default.
	BatchIdle, BatchMax time.Duration
}

// InstanceType is one instance type Karpenter may launch: its allocatable
// size before Karpenter's kube-reserved overhead (100m CPU, 10Mi: kwok/
// cloudprovider/helpers.go), and its price, by which Karpenter picks the
// cheapest type that fits.
type InstanceType struct {
	Name         string
	CPU, Memory  string // quantities, e.g. "2", "4Gi"
	Pods         int    // 0: Karpenter's default of 110
	PricePerHour float64
}

// karpenterZone is the one zone the simulated instance types are offered in.
const karpenterZone = "local-a"

// DefaultInstanceTypes are x86 compute- and general-purpose sizes of the kind
// Auto Mode's general-purpose pool launches (c and m families); c6a.large is
// the instance of the published launch figures (awslabs/node-latency-for-k8s).
// Prices are us-east-1 on-demand Linux list prices per hour; only their order
// decides what Karpenter launches.
var DefaultInstanceTypes = []InstanceType{
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
	InstanceTypes []InstanceType
}

// The names of the objects Options.Karpenter applies.
const (
	KarpenterNodeClass = "default"
	KarpenterNodePool  = "general-purpose"
)

// withDefaults fills what o leaves unset and refuses what Karpenter or its
// CRDs would refuse later (durations in whole seconds, instance types it
// cannot size or price).
func (o KarpenterOptions) withDefaults() (KarpenterOptions, error) {
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

// karpenterSpec is Karpenter with its KWOK cloud provider; ready when its
// /readyz answers.
func karpenterSpec(s karpenterSettings) processSpec {
	args := []string{
		"--disable-leader-election=true",
		"--metrics-port=" + strconv.Itoa(s.MetricsPort),
		"--health-probe-port=" + strconv.Itoa(s.HealthPort),
		"--instance-types-file-path=" + s.InstanceTypesFile,
	}
	if s.BatchIdle > 0 {
		args = append(args, "--batch-idle-duration="+s.BatchIdle.String())
	}
	if s.BatchMax > 0 {
		args = append(args, "--batch-max-duration="+s.BatchMax.String())
	}
	return processSpec{
		name: "karpenter", binary: s.Binary, args: args,
		env:   []string{"KUBECONFIG=" + s.Kubeconfig},
		files: []file{{path: s.InstanceTypesFile, data: instanceTypesJSON(s.InstanceTypes)}},
		ready: readiness{url: "http://127.0.0.1:" + strconv.Itoa(s.HealthPort) + "/readyz", timeout: 90 * time.Second},
	}
}

// instanceTypesJSON is the instance-types file Karpenter's KWOK provider reads
// (kwok/cloudprovider/helpers.go, InstanceTypeOptions): each type linux/amd64,
// offered on demand in karpenterZone. An offering's fields are
// cloudprovider.Offering's, which have no JSON tags ("Price", "Available")
// and whose Requirements the KWOK offering's node selector requirements
// replace. (Upstream's kwok/examples/instance_types.json writes "zone" and
// "capacityType" instead: no such fields, silently ignored.)
func instanceTypesJSON(types []InstanceType) string {
	out := []map[string]any{}
	for _, t := range types {
		resources := map[string]any{"cpu": t.CPU, "memory": t.Memory}
		if t.Pods > 0 {
			resources["pods"] = strconv.Itoa(t.Pods)
		}
		out = append(out, map[string]any{
			"name": t.Name, "architecture": "amd64", "operatingSystems": []string{"linux"},
			"resources": resources,
			"offerings": []any{map[string]any{
				"Price": t.PricePerHour, "Available": true,
				"Requirements": []any{
					map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []string{"on-demand"}},
					map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []string{karpenterZone}},
				},
			}},
		})
	}
	b, _ := json.MarshalIndent(out, "", "  ") // strings, numbers and lists: never fails
	return string(b)
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
// Its nodes carry SandboxNodeLabel, so the simulated isolated RuntimeClass
// schedules sandboxes onto them.
func karpenterNodePool(name, nodeClass string, consolidateAfter time.Duration) map[string]any {
	return map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{SandboxNodeLabel: "true"}},
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
