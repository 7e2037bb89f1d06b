package verifier

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// Config is everything a run needs: stack outputs first, flags on top.
type Config struct {
	Kubeconfig  string
	Context     string
	OutputsFile string
	Stack       string

	Namespace string
	// StackNamespace holds the exporter (its Deployment, Service and ServiceAccount): the
	// stackNamespace output; the pool's namespace in a one-pool stack.
	StackNamespace   string
	StackLabel       string
	Pool             string
	ScaledObject     string
	ExporterService  string
	ExporterSA       string
	ExporterURL      string
	ExporterPath     string
	ClaimSelector    string
	LoadCap          int
	OutputsMin       int
	OutputsMax       int
	kubeconfigOutput string // the stack's kubeconfig output (contents), if any
	// SizingPolicy is the pool's sizingPolicy output ("claims", "arrivals"; "" unknown).
	SizingPolicy string

	// Targets are the pools this run drives (all of the stack's, or the one --pool names);
	// AllTargets every pool of the stack (the cross-pool control reads them all). Both empty:
	// one pool from the single keys above.
	Targets    []PoolTarget
	AllTargets []PoolTarget

	Phase       string
	JSONPath    string
	RequireExec bool
	// PoolsInTurn runs the pools' phases one after another instead of side by side.
	PoolsInTurn bool
	OrdinaryPod string
	ProbeURL    string
	DownEach    bool
	// Isolation is what the readings must show: isolationVM or isolationGVisor.
	Isolation string
	// WithoutStackLabel: the user says the namespace carries no stack label.
	WithoutStackLabel bool

	StepTimeout     time.Duration
	AdoptionBound   time.Duration
	AdoptionTimeout time.Duration
	ExporterTimeout time.Duration
	HPATimeout      time.Duration
	RestoreTimeout  time.Duration
	ExecTimeout     time.Duration
	Poll            time.Duration
	// HPASync is the HPA controller's sync period: a formula-sized step counts a reading taken
	// within one polling interval plus one sync of the decision.
	HPASync      time.Duration
	ControlFloor time.Duration
	ControlK     float64
	ScaleUpTime  time.Duration
}

// defaultConfig holds the blueprint's names and the timeouts sized for a
// 15 s HPA sync period.
func defaultConfig() Config {
	return Config{
		Namespace:       contract.DefaultNamespace,
		Pool:            contract.DefaultPoolName,
		ScaledObject:    contract.ScaledObjectName,
		ExporterService: contract.ExporterName,
		ExporterSA:      contract.ExporterName,
		ExporterPath:    strings.TrimPrefix(contract.DemandPath, "/"),
		LoadCap:         contract.DefaultLoadCap,
		Phase:           "all",
		ProbeURL:        "https://aws.amazon.com",
		DownEach:        true,
		Isolation:       isolationVM,
		StepTimeout:     90 * time.Second,
		AdoptionBound:   time.Second,
		AdoptionTimeout: 60 * time.Second,
		ExporterTimeout: 60 * time.Second,
		HPATimeout:      90 * time.Second,
		RestoreTimeout:  2 * time.Minute,
		ExecTimeout:     30 * time.Second,
		Poll:            2 * time.Second,
		HPASync:         15 * time.Second,
		ControlFloor:    60 * time.Second,
		ControlK:        4,
	}
}

// usageError ends the run with exit status 2 before anything is touched.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseConfig reads flags, then the stack outputs (file or pulumi), and lets
// every flag the user set win over the outputs. note receives informational
// lines (where the outputs came from).
func parseConfig(args []string, usage io.Writer, note func(string, ...any), runPulumi func(stack string) ([]byte, error)) (Config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `go run ./verify [flags]

Proves on the live cluster that KEDA, and only KEDA, moves the SandboxWarmPool's
spec.replicas with SandboxClaim demand. Reads the Pulumi stack outputs
(pulumi stack output --json --show-secrets, or --outputs-file); flags override them.
Exit status: 0 when no check failed, 1 when one did, 2 when it refused to run.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: the stack's kubeconfig output, else $KUBECONFIG / ~/.kube/config)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context to use (default: the kubeconfig's current context)")
	fs.StringVar(&c.OutputsFile, "outputs-file", "", "read stack outputs from this JSON file instead of running pulumi; \"none\" to use flags and defaults only")
	fs.StringVar(&c.Stack, "stack", "", "Pulumi stack to read outputs from (passed to pulumi stack output --stack)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "the pool's namespace (output namespace, or pools[].namespace of the pool --pool names)")
	fs.StringVar(&c.StackNamespace, "stack-namespace", "", "namespace of the exporter's Deployment, Service and ServiceAccount (output stackNamespace; default: the pool's namespace)")
	fs.StringVar(&c.StackLabel, "stack-label", "", "expected value of the namespace label "+labelStack+" (output stackLabel); without it verify refuses to run")
	fs.BoolVar(&c.WithoutStackLabel, "without-stack-label", false, "run with no stack label known, in a namespace that carries none (refused if it carries one: name it with --stack-label)")
	fs.StringVar(&c.Isolation, "isolation", c.Isolation, "isolation the sandbox runtime must show: vm (EKS) or gvisor (the local stand-in) (output isolation)")
	fs.StringVar(&c.Pool, "pool", c.Pool, "SandboxWarmPool name (output poolName); with the pools output it names the one pool to run (unset: every pool of the stack)")
	fs.StringVar(&c.ScaledObject, "scaled-object", c.ScaledObject, "ScaledObject name (output scaledObjectName, or pools[].scaledObjectName of the pool --pool names)")
	fs.StringVar(&c.ExporterService, "exporter-service", c.ExporterService, "exporter Service name, port 8080 (output exporterService)")
	fs.StringVar(&c.ExporterSA, "exporter-service-account", c.ExporterSA, "exporter ServiceAccount for the access reviews (output exporterServiceAccount)")
	fs.StringVar(&c.ExporterURL, "exporter-url", "", "read the exporter here instead of through the API server's service proxy: its address (http://127.0.0.1:8080, or .../demand) serves each pool at its own path (pools[].exporterUrl's); a URL with another path is one pool's answer")
	fs.StringVar(&c.ClaimSelector, "claim-selector", "", "label selector the exporter counts the pool's claims with; empty = every claim in the pool's namespace (output claimSelector, or pools[].claimSelector)")
	fs.IntVar(&c.LoadCap, "load-cap", c.LoadCap, "most claims verify creates on a pool (demand-1..N); must be <= maxReplicaCount (output loadCap, or pools[].loadCap); set, it applies to every pool run")
	fs.StringVar(&c.Phase, "phase", c.Phase, "demand, control or all")
	fs.StringVar(&c.JSONPath, "json", "", "also write a machine-readable report to this file (\"-\" = stdout, text then goes to stderr)")
	fs.BoolVar(&c.PoolsInTurn, "pools-in-turn", false, "run the pools' phases one after another (default: side by side, each pool in its own namespace; use it when the cluster has no room for every pool's load cap at once)")
	fs.BoolVar(&c.RequireExec, "require-exec", false, "treat a node without a kubelet (KWOK, or kubelet port 0) as FAIL instead of SKIP for the readings")
	fs.StringVar(&c.OrdinaryPod, "ordinary-pod", "", "ordinary pod, in the stack namespace, to compare the sandbox readings with (default: a running pod of the exporter Deployment)")
	fs.StringVar(&c.ProbeURL, "probe-url", c.ProbeURL, "http(s) URL outside the pod that the no-network check requests from the claimed pod (/bin/httpprobe, else wget); an IP literal does not depend on name resolution")
	fs.BoolVar(&c.DownEach, "down-stepwise", c.DownEach, "scale down one claim at a time, asserting each step (false: delete all claims at once)")
	fs.DurationVar(&c.StepTimeout, "step-timeout", c.StepTimeout, "how long one scaling step may take (scale-down adds the HPA's stabilization window)")
	fs.DurationVar(&c.AdoptionBound, "adoption-bound", c.AdoptionBound, "a claim must report Ready within this long after its create returned")
	fs.DurationVar(&c.AdoptionTimeout, "adoption-timeout", c.AdoptionTimeout, "how long to wait for the claim to report Ready at all")
	fs.DurationVar(&c.ExporterTimeout, "exporter-timeout", c.ExporterTimeout, "how long to wait for the exporter to serve the current demand")
	fs.DurationVar(&c.HPATimeout, "hpa-timeout", c.HPATimeout, "how long to wait for KEDA's HPA to go (control) and come back (restore)")
	fs.DurationVar(&c.RestoreTimeout, "restore-timeout", c.RestoreTimeout, "how long the exit handler may take to delete claims and restore the ScaledObject")
	fs.DurationVar(&c.ExecTimeout, "exec-timeout", c.ExecTimeout, "timeout of one exec into a pod")
	fs.DurationVar(&c.Poll, "poll-interval", c.Poll, "polling interval (the fallback beside watches; the control's reading rate)")
	fs.DurationVar(&c.HPASync, "hpa-sync-period", c.HPASync, "the HPA controller's sync period (kube-controller-manager --horizontal-pod-autoscaler-sync-period); a formula-sized step holds spec.replicas to a reading taken within the ScaledObject's pollingInterval plus this of the decision")
	fs.DurationVar(&c.ControlFloor, "control-floor", c.ControlFloor, "shortest control window")
	fs.Float64Var(&c.ControlK, "control-k", c.ControlK, "control window = max(control-floor, k x measured scale-up time)")
	fs.DurationVar(&c.ScaleUpTime, "scale-up-time", 0, "scale-up time to size the control window with when --phase control runs without a demand phase")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, usageError{fmt.Sprintf("unexpected arguments: %v", fs.Args())}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var raw []byte
	switch {
	case c.OutputsFile == "none":
		note("stack outputs: none (--outputs-file none): flags and defaults only")
	case c.OutputsFile != "":
		b, err := os.ReadFile(c.OutputsFile)
		if err != nil {
			return c, usageError{fmt.Sprintf("reading --outputs-file: %v", err)}
		}
		raw = b
		note("stack outputs: %s", c.OutputsFile)
	default:
		b, err := runPulumi(c.Stack)
		if err != nil {
			// Outside the project there is no stack; the namespace guard still
			// protects the run, so go on with flags and defaults, and say so.
			note("stack outputs: none (pulumi stack output: %v): flags and defaults only", err)
		} else {
			raw = b
			note("stack outputs: pulumi stack output --json --show-secrets")
		}
	}
	if raw != nil {
		o, err := parseOutputs(raw)
		if err != nil {
			return c, usageError{fmt.Sprintf("stack outputs: %v", err)}
		}
		o.applyTo(&c, set)
		if err := o.selectPools(&c, set); err != nil {
			return c, err
		}
	}
	if c.StackNamespace == "" {
		c.StackNamespace = c.Namespace
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	return c, nil
}

func (c *Config) validate() error {
	switch c.Phase {
	case "demand", "control", "all":
	default:
		return usageError{fmt.Sprintf("--phase must be demand, control or all, not %q", c.Phase)}
	}
	if c.LoadCap < 1 {
		return usageError{fmt.Sprintf("--load-cap must be at least 1, not %d", c.LoadCap)}
	}
	if c.Namespace == "" || c.Pool == "" || c.ScaledObject == "" {
		return usageError{"namespace, pool and scaled object names must not be empty"}
	}
	for _, t := range c.targets() {
		if t.LoadCap < 1 {
			return usageError{fmt.Sprintf("pool %s: the load cap must be at least 1, not %d", t.Name, t.LoadCap)}
		}
	}
	if p := urlPath(c.ExporterURL); len(c.allTargets()) > 1 && p != "" && p != strings.TrimPrefix(contract.DemandPath, "/") {
		return usageError{fmt.Sprintf("--exporter-url %s names a path, and the stack has %d pools, each served at its own path: give the exporter's address (http://host:port, or .../demand) and verify reads each pool's path from the pools output", c.ExporterURL, len(c.allTargets()))}
	}
	if c.ControlK <= 0 {
		return usageError{"--control-k must be positive"}
	}
	if c.HPASync <= 0 {
		return usageError{"--hpa-sync-period must be positive"}
	}
	if _, ok := isolationMeaning[c.Isolation]; !ok {
		return usageError{fmt.Sprintf("--isolation (or the isolation output) must be %s or %s, not %q", isolationVM, isolationGVisor, c.Isolation)}
	}
	if c.WithoutStackLabel && c.StackLabel != "" {
		return usageError{fmt.Sprintf("--without-stack-label says no stack label is known, but the stack label is %q (from --stack-label or the stackLabel output); drop one of them", c.StackLabel)}
	}
	if err := checkProbeURL(c.ProbeURL); err != nil {
		return usageError{"--probe-url: " + err.Error()}
	}
	return nil
}

// checkProbeURL wants an http(s) URL to a host outside the pod: a loopback
// or unspecified host would be refused inside the pod itself and prove
// nothing about its network.
func checkProbeURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%q is not an http or https URL with a host", raw)
	}
	h := strings.ToLower(u.Hostname())
	if a, err := netip.ParseAddr(h); (err == nil && (a.IsLoopback() || a.IsUnspecified())) || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%q names the pod itself (%s): the request must go to a host outside the pod", raw, h)
	}
	return nil
}

// Isolations verify knows, and what the readings must show under each.
const (
	isolationVM     = contract.IsolationVM
	isolationGVisor = contract.IsolationGVisor
)

var isolationMeaning = map[string]string{
	isolationVM:     "a VM of its own, as EKS Nitro Sandboxes give: own kernel, fresh uptime, virtio disks, a DMI product name, no network",
	isolationGVisor: "gVisor, the local stand-in: own kernel, fresh uptime, no network; virtio disks and DMI are a VM's readings, N/A here",
}

// stackOutputs is the subset of the contract's outputs verify uses.
type stackOutputs struct {
	Kubeconfig, Namespace, StackLabel, Pool, ScaledObject   string
	ExporterSA, ExporterService, ExporterURL, ClaimSelector string
	Isolation, StackNamespace                               string
	Min, Max, LoadCap                                       *int
	// Pools is the pools output (nil in outputs written before it existed).
	Pools []poolOutput
}

// poolOutput is one element of the pools output.
type poolOutput struct {
	Name, Namespace, TemplateName, ScaledObject, ExporterURL, ClaimSelector, SizingPolicy string
	Min, Max, LoadCap                                                                     *int
}

// PoolTarget is one pool as a run drives it: its names, where the exporter serves its demand,
// and the bounds and load cap the stack exported for it.
type PoolTarget struct {
	Name, Namespace, ScaledObject, ClaimSelector string
	// ExporterPath is the path (no leading slash) of the pool's answer: "demand" or "demand/<pool>".
	ExporterPath string
	// SizingPolicy is the stack's word for the pool's sizing ("claims", "arrivals"; "" unknown).
	SizingPolicy           string
	LoadCap                int
	OutputsMin, OutputsMax int
}

// outputsObject reads the keys of one JSON object of outputs; errs collects what is malformed.
type outputsObject struct {
	m    map[string]json.RawMessage
	errs []error
}

func parseOutputsObject(raw []byte) (*outputsObject, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return &outputsObject{m: m}, nil
}

// str reads a string; a secret hidden as "[secret]" is absent.
func (o *outputsObject) str(key string, dst *string) {
	v, ok := o.m[key]
	if !ok {
		return
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		// kubeconfig may be an object when a program exports it unserialized.
		if key == "kubeconfig" && len(v) > 0 && v[0] == '{' {
			*dst = string(v)
			return
		}
		o.errs = append(o.errs, fmt.Errorf("%s: %w", key, err))
		return
	}
	if s == "[secret]" {
		return
	}
	*dst = s
}

// num reads a whole number, written as a JSON number or a string.
func (o *outputsObject) num(key string, dst **int) {
	v, ok := o.m[key]
	if !ok {
		return
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		var s string
		if err2 := json.Unmarshal(v, &s); err2 != nil {
			o.errs = append(o.errs, fmt.Errorf("%s: %w", key, err))
			return
		}
		n = json.Number(s)
	}
	i, err := strconv.Atoi(n.String())
	if err != nil {
		o.errs = append(o.errs, fmt.Errorf("%s: %w", key, err))
		return
	}
	*dst = &i
}

// parseOutputs reads `pulumi stack output --json` (numbers may come as JSON
// numbers or strings; secrets hidden as "[secret]" are treated as absent).
func parseOutputs(raw []byte) (stackOutputs, error) {
	obj, err := parseOutputsObject(raw)
	if err != nil {
		return stackOutputs{}, err
	}
	m := obj.m
	var o stackOutputs
	str, num := obj.str, obj.num
	var errs []error
	str("kubeconfig", &o.Kubeconfig)
	str("namespace", &o.Namespace)
	str("stackNamespace", &o.StackNamespace)
	str("stackLabel", &o.StackLabel)
	str("poolName", &o.Pool)
	str("scaledObjectName", &o.ScaledObject)
	str("exporterServiceAccount", &o.ExporterSA)
	str("exporterService", &o.ExporterService)
	str("exporterUrl", &o.ExporterURL)
	str("claimSelector", &o.ClaimSelector)
	str("isolation", &o.Isolation)
	num("minReplicas", &o.Min)
	num("maxReplicas", &o.Max)
	num("loadCap", &o.LoadCap)
	errs = append(errs, obj.errs...)
	if v, ok := m["pools"]; ok && string(v) != "null" {
		pools, err := parsePoolOutputs(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("pools: %w", err))
		}
		o.Pools = pools
	}
	return o, errors.Join(errs...)
}

// parsePoolOutputs reads the pools output: a list of objects with the one-pool keys per pool.
func parsePoolOutputs(raw json.RawMessage) ([]poolOutput, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("not a list: %w", err)
	}
	var out []poolOutput
	var errs []error
	seen := map[string]bool{}
	for i, e := range list {
		sub, err := parseOutputsObject(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		p := poolOutput{}
		sub.str("name", &p.Name)
		sub.str("namespace", &p.Namespace)
		sub.str("templateName", &p.TemplateName)
		sub.str("scaledObjectName", &p.ScaledObject)
		sub.str("exporterUrl", &p.ExporterURL)
		sub.str("claimSelector", &p.ClaimSelector)
		sub.str("sizingPolicy", &p.SizingPolicy)
		sub.num("minReplicas", &p.Min)
		sub.num("maxReplicas", &p.Max)
		sub.num("loadCap", &p.LoadCap)
		if err := errors.Join(sub.errs...); err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		if p.Name == "" || p.Namespace == "" {
			errs = append(errs, fmt.Errorf("[%d] has no name or no namespace", i))
			continue
		}
		if seen[p.Namespace+"/"+p.Name] {
			errs = append(errs, fmt.Errorf("[%d]: pool %s/%s is listed twice", i, p.Namespace, p.Name))
			continue
		}
		seen[p.Namespace+"/"+p.Name] = true
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// applyTo fills c from the outputs wherever the user did not set the flag.
func (o stackOutputs) applyTo(c *Config, set map[string]bool) {
	s := func(flagName, v string, dst *string) {
		if v != "" && !set[flagName] {
			*dst = v
		}
	}
	c.kubeconfigOutput = o.Kubeconfig
	s("namespace", o.Namespace, &c.Namespace)
	s("stack-label", o.StackLabel, &c.StackLabel)
	s("pool", o.Pool, &c.Pool)
	s("scaled-object", o.ScaledObject, &c.ScaledObject)
	s("exporter-service-account", o.ExporterSA, &c.ExporterSA)
	s("exporter-service", o.ExporterService, &c.ExporterService)
	s("claim-selector", o.ClaimSelector, &c.ClaimSelector)
	s("isolation", o.Isolation, &c.Isolation)
	// exporterUrl is the in-cluster URL KEDA uses; it is not reachable from
	// here, so only its path is taken (the proxy path), never the host.
	if p := urlPath(o.ExporterURL); p != "" {
		c.ExporterPath = p
	}
	if o.LoadCap != nil && !set["load-cap"] {
		c.LoadCap = *o.LoadCap
	}
	if o.Min != nil {
		c.OutputsMin = *o.Min
	}
	if o.Max != nil {
		c.OutputsMax = *o.Max
	}
	// The exporter's namespace: the stackNamespace output. Where it is the pool's own (a
	// one-pool stack) a --namespace moves both, as it always did; absent (outputs written
	// before it existed) it is the pool's namespace.
	if !set["stack-namespace"] && o.StackNamespace != "" && (o.StackNamespace != o.Namespace || !set["namespace"]) {
		c.StackNamespace = o.StackNamespace
	}
}

// selectPools turns the pools output into the run's targets: every pool, or the one --pool
// names. Flags that name one pool's objects apply to the one pool driven; with several they are
// refused rather than applied to the wrong pool. Without the pools output it does nothing: the
// single keys are the one pool, as before.
func (o stackOutputs) selectPools(c *Config, set map[string]bool) error {
	if len(o.Pools) == 0 {
		return nil
	}
	var all []PoolTarget
	var names []string
	for _, p := range o.Pools {
		t := PoolTarget{Name: p.Name, Namespace: p.Namespace, ScaledObject: p.ScaledObject, ClaimSelector: p.ClaimSelector,
			ExporterPath: urlPath(p.ExporterURL), SizingPolicy: p.SizingPolicy, LoadCap: c.LoadCap}
		if t.ScaledObject == "" {
			t.ScaledObject = p.Name
		}
		if t.ExporterPath == "" {
			t.ExporterPath = strings.TrimPrefix(contract.DemandPath, "/")
		}
		if p.LoadCap != nil && !set["load-cap"] {
			t.LoadCap = *p.LoadCap
		}
		if p.Min != nil {
			t.OutputsMin = *p.Min
		}
		if p.Max != nil {
			t.OutputsMax = *p.Max
		}
		all = append(all, t)
		names = append(names, p.Name)
	}
	selected := all
	if set["pool"] {
		selected = nil
		for _, t := range all {
			if t.Name == c.Pool {
				selected = append(selected, t)
			}
		}
		if len(selected) != 1 {
			return usageError{fmt.Sprintf("--pool %s: the stack has %d pools of that name; its pools are %s", c.Pool, len(selected), strings.Join(names, ", "))}
		}
	}
	if len(selected) > 1 {
		for _, f := range []string{"namespace", "scaled-object", "claim-selector"} {
			if set[f] {
				return usageError{fmt.Sprintf("--%s names one pool's object, and this run drives %d pools (%s); choose the pool with --pool", f, len(selected), strings.Join(names, ", "))}
			}
		}
	} else {
		t := &selected[0]
		if set["namespace"] {
			t.Namespace = c.Namespace
		}
		if set["scaled-object"] {
			t.ScaledObject = c.ScaledObject
		}
		if set["claim-selector"] {
			t.ClaimSelector = c.ClaimSelector
		}
		for i := range all {
			if all[i].Name == t.Name {
				all[i] = *t
			}
		}
	}
	c.Targets, c.AllTargets = selected, all
	// The single keys follow the first pool driven, so what reads them reads that pool.
	c.applyTarget(selected[0])
	return nil
}

// applyTarget sets the single keys to one pool's.
func (c *Config) applyTarget(t PoolTarget) {
	c.Namespace, c.Pool, c.ScaledObject, c.ClaimSelector = t.Namespace, t.Name, t.ScaledObject, t.ClaimSelector
	c.ExporterPath, c.SizingPolicy, c.LoadCap = t.ExporterPath, t.SizingPolicy, t.LoadCap
	c.OutputsMin, c.OutputsMax = t.OutputsMin, t.OutputsMax
}

// targets are the pools this run drives: the selected ones, or one from the single keys.
func (c Config) targets() []PoolTarget {
	if len(c.Targets) > 0 {
		return c.Targets
	}
	return []PoolTarget{{Name: c.Pool, Namespace: c.Namespace, ScaledObject: c.ScaledObject, ClaimSelector: c.ClaimSelector,
		ExporterPath: c.ExporterPath, SizingPolicy: c.SizingPolicy, LoadCap: c.LoadCap, OutputsMin: c.OutputsMin, OutputsMax: c.OutputsMax}}
}

// allTargets are every pool of the stack.
func (c Config) allTargets() []PoolTarget {
	if len(c.AllTargets) > 0 {
		return c.AllTargets
	}
	return c.targets()
}

// forPool is the config one pool's phases run with: the single keys are that pool's.
func (c Config) forPool(t PoolTarget) Config {
	d := c
	d.applyTarget(t)
	if d.StackNamespace == "" {
		d.StackNamespace = c.Namespace
	}
	return d
}

// stackNamespace is where the exporter lives.
func (c Config) stackNamespace() string {
	if c.StackNamespace != "" {
		return c.StackNamespace
	}
	return c.Namespace
}

// pulumiOutputs runs the Pulumi CLI in the current directory.
func pulumiOutputs(stack string) ([]byte, error) {
	if _, err := exec.LookPath("pulumi"); err != nil {
		return nil, errors.New("pulumi is not on PATH")
	}
	args := []string{"stack", "output", "--json", "--show-secrets"}
	if stack != "" {
		args = append(args, "--stack", stack)
	}
	cmd := exec.Command("pulumi", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// restConfig picks the cluster: --kubeconfig, else the stack's kubeconfig
// output, else the usual loading rules; --context applies to all three.
func restConfig(c Config) (*rest.Config, string, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
	switch {
	case c.Kubeconfig != "":
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}, overrides)
		rc, err := cc.ClientConfig()
		return rc, "--kubeconfig " + c.Kubeconfig, err
	case c.kubeconfigOutput != "":
		kc, err := clientcmd.Load([]byte(c.kubeconfigOutput))
		if err != nil {
			return nil, "", fmt.Errorf("stack output kubeconfig: %w", err)
		}
		rc, err := clientcmd.NewDefaultClientConfig(*kc, overrides).ClientConfig()
		return rc, "the stack's kubeconfig output", err
	default:
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), overrides)
		rc, err := cc.ClientConfig()
		return rc, "the default kubeconfig", err
	}
}

// guardNamespace refuses a namespace this stack does not own: verify creates
// and deletes claims and removes a ScaledObject there. The stack label must
// match; with none known the user must say so (--without-stack-label), and
// then a namespace that carries a stack label, another stack's or not, is
// still refused.
func guardNamespace(ctx context.Context, kube kubernetes.Interface, ns, stackLabel string, withoutStackLabel bool) (string, error) {
	n, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return "", usageError{fmt.Sprintf("refusing to run: cannot read namespace %s: %v", ns, err)}
	}
	l := n.GetLabels()
	if l[labelManagedBy] != projectName {
		return "", usageError{fmt.Sprintf("refusing to run: namespace %s is not labelled %s=%s (it has %s=%q), so it is not this stack's",
			ns, labelManagedBy, projectName, labelManagedBy, l[labelManagedBy])}
	}
	got, labelled := l[labelStack]
	switch {
	case stackLabel != "" && got != stackLabel:
		return "", usageError{fmt.Sprintf("refusing to run: namespace %s has %s=%q, not this stack's %q",
			ns, labelStack, got, stackLabel)}
	case stackLabel == "" && labelled:
		return "", usageError{fmt.Sprintf("refusing to run: the stack label is not known (no stackLabel output, no --stack-label) and namespace %s is labelled %s=%q, which may be another stack's; if it is yours, run with --stack-label %s",
			ns, labelStack, got, got)}
	case stackLabel == "" && !withoutStackLabel:
		return "", usageError{fmt.Sprintf("refusing to run: the stack label is not known (no stackLabel output, no --stack-label), so verify cannot tell whose namespace %s is; name it with --stack-label, or pass --without-stack-label to run in this namespace, which carries no %s label",
			ns, labelStack)}
	}
	ev := fmt.Sprintf("namespace %s is labelled %s=%s", ns, labelManagedBy, projectName)
	if stackLabel != "" {
		ev += fmt.Sprintf(" and %s=%s", labelStack, stackLabel)
	} else {
		ev += fmt.Sprintf(" and carries no %s label (--without-stack-label)", labelStack)
	}
	return ev, nil
}

// urlPath returns the path of an http URL without its leading slash.
func urlPath(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	rest := u[i+3:]
	j := strings.Index(rest, "/")
	if j < 0 {
		return ""
	}
	return strings.TrimPrefix(rest[j:], "/")
}
