package procspec

import (
	"encoding/json"
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

// KarpenterSettings are what Karpenter's command line depends on.
type KarpenterSettings struct {
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
	// Debug sets LOG_LEVEL=debug: Karpenter then logs each scheduling
	// simulation it runs with the pending pods it saw, not only the ones that
	// launch a node.
	Debug bool
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

// Karpenter is Karpenter with its KWOK cloud provider; ready when its
// /readyz answers.
func Karpenter(s KarpenterSettings) Spec {
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
	env := []string{"KUBECONFIG=" + s.Kubeconfig}
	if s.Debug {
		env = append(env, "LOG_LEVEL=debug") // pkg/operator/options: debug, info (the default) or error
	}
	return Spec{
		Name: "karpenter", binary: s.Binary, args: args,
		env:   env,
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
