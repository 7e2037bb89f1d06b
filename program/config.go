package program

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
	"sigs.k8s.io/yaml"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// Nitro Sandboxes (the isolated-sandbox RuntimeClass on Auto Mode) need Kubernetes 1.36 or newer.
const minKubernetesMinor = 36

// Config is the validated stack configuration. Defaults match Pulumi.yaml (a test keeps them in step),
// because unit tests and the Automation API inline program do not go through the CLI's typed defaults.
type Config struct {
	Project string
	Stack   string

	ClusterMode       string
	ClusterName       string
	KubernetesVersion string
	VpcID             string
	PrivateSubnetIDs  []string
	// publicSubnetIDs is only read to refuse it: the cluster gets private subnets only.
	publicSubnetIDs []string
	// Create mode: who besides the creator may reach the cluster (EKS access entries).
	AdminPrincipalArns  []string
	PreviewPrincipalArn string
	// Create mode: the API endpoint, the tags on every AWS resource and EKS's upgrade policy
	// (endpoint.go); createModeKeysSet: those of them the stack set.
	EndpointPrivateAccess     bool
	EndpointPublicAccess      bool
	EndpointPublicAccessCidrs []string
	Tags                      map[string]string
	UpgradePolicy             string
	// ClusterLogTypes are the control-plane logs sent to CloudWatch Logs (`clusterLogTypes`).
	ClusterLogTypes []string
	// ClusterLogRetentionDays is how long the control-plane log group keeps them.
	ClusterLogRetentionDays int
	// SecretsKmsKeyArn is the customer-managed key EKS encrypts the Kubernetes API's data with
	// (empty: EKS's default, an AWS-owned key).
	SecretsKmsKeyArn string
	// NatGatewayPerZone gives each zone of the stack's own network a NAT gateway of its own
	// (`natGatewayPerZone`); DeletionProtection protects the EKS cluster from `pulumi destroy`.
	NatGatewayPerZone  bool
	DeletionProtection bool
	// SandboxNodePool puts the sandboxes on a NodeClass and NodePool of the stack's own
	// (`sandboxNodePool`, sandboxnodes.go); SandboxNodeCPU is their nodes' vCPUs (`sandboxNodeCpu`).
	SandboxNodePool   bool
	SandboxNodeCPU    int
	createModeKeysSet []string
	// callersCluster: an AutoscaledWarmPool component's config, on the cluster its caller's
	// kubernetes provider reaches (componentconfig.go); the cluster keys are not its inputs.
	callersCluster bool
	// Kubeconfig holds the kubeconfig contents (a path in config is read here), with
	// current-context set to KubeContext when one is given, so the exported copy is self-contained.
	Kubeconfig  string
	KubeContext string

	RuntimeClassMode    string
	RuntimeClassHandler string
	AgentSandboxMode    string
	AgentSandboxVersion string
	KedaMode            string
	KedaChartVersion    string

	Namespace    string
	PoolName     string
	TemplateName string

	// PoolSettings are the one-pool shorthand's agent, bounds and sizing (minReplicas, maxReplicas,
	// targetValue, template, sizing, ...); a listed pool's defaults come from some of them.
	PoolSettings

	ExporterImage string
	// ExporterImageRepository is where the stack publishes the exporter's image it builds
	// (`exporterImageRepository`); empty in create mode: an ECR repository of the stack's own.
	// ExporterImagePlatform is the platform that image is built for.
	ExporterImageRepository string
	ExporterImagePlatform   string
	// unknownExporterImage and unknownExporterRepository carry exporterImage and
	// exporterImageRepository when a preview does not know them yet (awaitUnknown); the fields
	// above hold stand-ins then.
	unknownExporterImage, unknownExporterRepository *pulumi.StringOutput
	// ExporterReplicas: exporter pods behind the Service, spread over nodes and zones.
	ExporterReplicas int

	// Isolation is what verify's readings must show: contract.IsolationVM or contract.IsolationGVisor.
	Isolation string

	// Keda is KEDA's install values (the `keda` key, install mode); kedaSet: the key was set.
	Keda    components.KedaValues
	kedaSet bool
	// Monitoring is the exporter's ServiceMonitor and the alerting rules (the `monitoring` key).
	Monitoring Monitoring
	// PoolList is the `pools` list; empty: the one pool the top-level keys describe (see Pools).
	PoolList []*Pool
}

// StackLabelValue is the value of StackLabel on this stack's namespace.
func (c *Config) StackLabelValue() string { return c.Project + "." + c.Stack }

// InClusterExporterURL is the URL KEDA reads unless exporterUrl overrides it.
func (c *Config) InClusterExporterURL() string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d%s", contract.ExporterName, c.Namespace, contract.ExporterPort, contract.DemandPath)
}

// LoadConfig reads the project's config, applies the defaults and validates it. It registers
// nothing, so a bad config fails the run before any resource exists.
func LoadConfig(ctx *pulumi.Context) (*Config, error) {
	r := &configReader{cfg: config.New(ctx, contract.ProjectName)}
	c := r.read(ctx.Project(), ctx.Stack())
	if err := c.Validate(r.errs...); err != nil {
		return nil, err
	}
	if c.ClusterMode == components.ModeExisting {
		contents, err := resolveKubeconfig(c.Kubeconfig, c.KubeContext)
		if err != nil {
			return nil, err
		}
		c.Kubeconfig = contents
	}
	return c, nil
}

// read reads every key with its default; what is malformed is left in r.errs for Validate.
func (r *configReader) read(project, stack string) *Config {
	c := &Config{
		Project:                   project,
		Stack:                     stack,
		ClusterMode:               r.str("clusterMode", components.ModeCreate),
		ClusterName:               r.str("clusterName", ""),
		KubernetesVersion:         r.str("kubernetesVersion", contract.KubernetesVersion),
		VpcID:                     r.str("vpcId", ""),
		PrivateSubnetIDs:          r.list("privateSubnetIds"),
		publicSubnetIDs:           r.list("publicSubnetIds"),
		AdminPrincipalArns:        r.list("adminPrincipalArns"),
		PreviewPrincipalArn:       strings.TrimSpace(r.str("previewPrincipalArn", "")),
		EndpointPrivateAccess:     r.boolean("endpointPrivateAccess", defaultEndpointPrivateAccess),
		EndpointPublicAccess:      r.boolean("endpointPublicAccess", defaultEndpointPublicAccess),
		EndpointPublicAccessCidrs: r.list("endpointPublicAccessCidrs"),
		UpgradePolicy:             r.str("upgradePolicy", defaultUpgradePolicy),
		ClusterLogTypes:           r.listOr("clusterLogTypes", defaultClusterLogTypes),
		ClusterLogRetentionDays:   r.int("clusterLogRetentionDays", defaultClusterLogRetentionDays),
		SecretsKmsKeyArn:          strings.TrimSpace(r.str("secretsKmsKeyArn", "")),
		NatGatewayPerZone:         r.boolean("natGatewayPerZone", false),
		DeletionProtection:        r.boolean("deletionProtection", false),
		SandboxNodePool:           r.boolean("sandboxNodePool", defaultSandboxNodePool),
		SandboxNodeCPU:            r.int("sandboxNodeCpu", defaultSandboxNodeCPU),
		Kubeconfig:                r.str("kubeconfig", ""),
		KubeContext:               r.str("kubeContext", ""),
		RuntimeClassMode:          r.str("runtimeClassMode", components.ModeRequire),
		RuntimeClassHandler:       r.str("runtimeClassHandler", ""),
		AgentSandboxMode:          r.str("agentSandboxMode", components.ModeInstall),
		AgentSandboxVersion:       r.str("agentSandboxVersion", contract.AgentSandboxRelease),
		KedaMode:                  r.str("kedaMode", components.ModeInstall),
		KedaChartVersion:          r.str("kedaChartVersion", contract.KedaChartVersion),
		Namespace:                 r.str("namespace", contract.DefaultNamespace),
		PoolName:                  r.str("poolName", contract.DefaultPoolName),
		TemplateName:              r.str("templateName", contract.DefaultTemplateName),
		PoolSettings: PoolSettings{
			MinReplicas:           r.int("minReplicas", contract.DefaultMinReplicas),
			MaxReplicas:           r.int("maxReplicas", contract.DefaultMaxReplicas),
			TargetValue:           r.str("targetValue", contract.DefaultTargetValue),
			ActivationTargetValue: r.str("activationTargetValue", ""),
			LoadCap:               r.int("loadCap", contract.DefaultLoadCap),
			PollingInterval:       r.int("pollingInterval", contract.DefaultPollingInterval),
			FallbackReplicas:      r.int("fallbackReplicas", contract.DefaultFallbackReplicas),
			Headroom:              r.int("headroom", contract.DefaultHeadroom),
			ExporterURL:           r.str("exporterUrl", ""),
			ClaimSelector:         r.str("claimSelector", ""),
		},
		ExporterImage:           r.str("exporterImage", ""),
		ExporterImageRepository: strings.TrimSpace(r.str("exporterImageRepository", "")),
		ExporterImagePlatform:   r.str("exporterImagePlatform", ""),
		ExporterReplicas:        r.int("exporterReplicas", contract.DefaultExporterReplicas),
		Isolation:               r.str("isolation", contract.IsolationVM),
	}
	c.readStructured(r)
	c.createModeKeysSet = createModeKeysSet(r)
	if c.ClusterName == "" {
		if c.ClusterMode == components.ModeExisting {
			c.ClusterName = c.KubeContext
		} else {
			c.ClusterName = c.Project + "-" + c.Stack
		}
	}
	return c
}

// readStructured reads the object keys: the one pool's template and sizing,
// and the list of pools, which refuses the shorthand's keys beside it.
func (c *Config) readStructured(r *configReader) {
	if raw, err := r.cfg.Try("template"); err == nil {
		if o, ok := decodeObject(raw, "template.", &r.errs); ok {
			c.Agent = readAgent(o)
		}
	}
	c.readTags(r)
	if raw, err := r.cfg.Try("keda"); err == nil && strings.Join(strings.Fields(raw), "") != "{}" {
		// "{}" is Pulumi.yaml's default, which the CLI hands over like a set value.
		if o, ok := decodeObject(raw, "keda.", &r.errs); ok {
			c.Keda, c.kedaSet = readKeda(o), true
		}
	}
	if raw, err := r.cfg.Try("monitoring"); err == nil && strings.Join(strings.Fields(raw), "") != "{}" {
		if o, ok := decodeObject(raw, "monitoring.", &r.errs); ok {
			c.Monitoring = readMonitoring(o)
		}
	}
	if raw, err := r.cfg.Try("sizing"); err == nil {
		if o, ok := decodeObject(raw, "sizing.", &r.errs); ok {
			c.Sizing = readSizing(o)
		}
	}
	c.ScaleUp, c.ScaleDown = components.DefaultScaleUp(), components.DefaultScaleDown()
	for _, d := range []struct {
		rules     *components.ScalingRules
		direction scalingDirection
	}{{&c.ScaleUp, scaleUpDirection}, {&c.ScaleDown, scaleDownDirection}} {
		if raw, err := r.cfg.Try(d.direction.key); err == nil {
			if o, ok := decodeObject(raw, d.direction.key+".", &r.errs); ok {
				*d.rules = readScalingRules(o, *d.rules, d.direction)
			}
		}
	}
	raw, err := r.cfg.Try("pools")
	if err != nil || strings.TrimSpace(raw) == "" || strings.TrimSpace(raw) == "[]" {
		return
	}
	// The shorthand's own keys would be silently ignored beside a list: refuse them. The CLI
	// passes Pulumi.yaml's defaults like set values, so a key counts as set when it differs.
	for _, k := range []struct{ key, def string }{
		{"poolName", contract.DefaultPoolName}, {"templateName", contract.DefaultTemplateName},
		{"template", "{}"}, {"sizing", "{}"}, {"headroom", strconv.Itoa(contract.DefaultHeadroom)},
		{"activationTargetValue", ""}, {"claimSelector", ""}, {"exporterUrl", ""},
	} {
		if r.setAwayFrom(k.key, k.def) {
			field := strings.Replace(k.key, "poolName", "name", 1)
			r.errs = append(r.errs, fmt.Sprintf("%s is a key of the one-pool shorthand, and pools is set; move it into each pool (`pulumi config set --path 'pools[0].%s' ...`) and remove it (`pulumi config rm %s`)", k.key, field, k.key))
		}
	}
	c.readPools(raw, &r.errs)
}

// configReader reads the stack's plain keys, gathering every malformed value
// so that one run reports them all.
type configReader struct {
	cfg  configSource
	errs []string
}

// configSource is where the keys come from: the stack's config (*config.Config), or the inputs
// of an AutoscaledWarmPool component (componentconfig.go), in the form the CLI hands config
// over: scalars as text, lists and objects as JSON.
type configSource interface {
	Try(key string) (string, error)
}

// setAwayFrom reports whether the stack sets key to something other than def (whitespace aside):
// the CLI hands Pulumi.yaml's defaults over like set values, so only a different value tells.
func (r *configReader) setAwayFrom(key, def string) bool {
	v, err := r.cfg.Try(key)
	return err == nil && strings.Join(strings.Fields(v), "") != def
}

// str reads a string key. A key whose default is not empty cannot be set to
// an empty value: `kedaMode: ""` is a mistake, not a request for the default.
func (r *configReader) str(key, def string) string {
	v, err := r.cfg.Try(key)
	if err != nil {
		return def
	}
	if def != "" && strings.TrimSpace(v) == "" {
		r.errs = append(r.errs, fmt.Sprintf("%s is set to an empty value; remove it (`pulumi config rm %s`) to use the default %q, or set a value", key, key, def))
		return def
	}
	return v
}

func (r *configReader) boolean(key string, def bool) bool {
	raw, err := r.cfg.Try(key)
	if err != nil {
		return def
	}
	b, convErr := strconv.ParseBool(strings.TrimSpace(raw))
	if convErr != nil {
		r.errs = append(r.errs, fmt.Sprintf("%s is %q; it must be true or false (`pulumi config set %s true`)", key, raw, key))
		return def
	}
	return b
}

func (r *configReader) int(key string, def int) int {
	raw, err := r.cfg.Try(key)
	if err != nil {
		return def
	}
	n, convErr := strconv.Atoi(strings.TrimSpace(raw))
	if convErr != nil {
		r.errs = append(r.errs, fmt.Sprintf("%s is %q, which is not a whole number; set it with `pulumi config set %s <integer>`", key, raw, key))
		return def
	}
	return n
}

// list reads a JSON list of strings, or "a,b" for convenience on the command line.
// listOr reads a list key, def when it is not set; set to [] it is empty.
func (r *configReader) listOr(key string, def []string) []string {
	if _, err := r.cfg.Try(key); err != nil {
		return slices.Clone(def)
	}
	l := r.list(key)
	if l == nil {
		l = []string{}
	}
	return l
}

func (r *configReader) list(key string) []string {
	raw, err := r.cfg.Try(key)
	if err != nil || strings.TrimSpace(raw) == "" {
		return nil
	}
	var list []string
	if json.Unmarshal([]byte(raw), &list) == nil {
		return list
	}
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	return list
}

var (
	eksClusterName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	// EKS takes MAJOR.MINOR, without a "v".
	kubeVersion = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	// exactSemver is the Semantic Versioning 2.0.0 grammar: MAJOR.MINOR.PATCH with an
	// optional pre-release and build, no leading zeros, no ranges or wildcards.
	exactSemver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
		`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
		`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	// metricValue is what KEDA's metrics-api scaler can take exactly: it turns the value
	// into milli-units in an int64, so a plain decimal with at most three decimals
	// (no exponent, NaN or Inf) and below a billion.
	metricValue = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,3})?$`)
)

// ReservedNamespaces are namespaces of shared installs or of Kubernetes itself. The stack
// owns its namespace (it labels it, sets its Pod Security level and deletes it on destroy),
// so it must never be one of these. Any "kube-" name is reserved by Kubernetes as well.
var ReservedNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease", contract.KedaNamespace, contract.AgentSandboxNamespace}

// Validate checks every rule at once, so one run reports every mistake; each message names the key,
// what is wrong and how to fix it.
func (c *Config) Validate(earlier ...string) error {
	errs := c.problems(earlier...)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration (keys under %s:):\n  - %s", contract.ProjectName, strings.Join(errs, "\n  - "))
}

// problems is every rule the config breaks, each naming its key.
func (c *Config) problems(earlier ...string) []string {
	errs := append([]string{}, earlier...)
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	oneOf := func(key, value string, allowed ...string) {
		for _, a := range allowed {
			if value == a {
				return
			}
		}
		add("%s is %q; it must be one of %s", key, value, strings.Join(allowed, ", "))
	}

	oneOf("clusterMode", c.ClusterMode, components.ModeCreate, components.ModeExisting)
	oneOf("runtimeClassMode", c.RuntimeClassMode, components.ModeRequire, components.ModeCreate)
	oneOf("agentSandboxMode", c.AgentSandboxMode, components.ModeInstall, components.ModeAdopt)
	oneOf("kedaMode", c.KedaMode, components.ModeInstall, components.ModeAdopt)
	oneOf("isolation", c.Isolation, contract.IsolationVM, contract.IsolationGVisor)

	switch c.ClusterMode {
	case components.ModeCreate:
		if m := kubeVersion.FindStringSubmatch(c.KubernetesVersion); m == nil {
			add("kubernetesVersion is %q; write it as MAJOR.MINOR, e.g. %s", c.KubernetesVersion, contract.KubernetesVersion)
		} else if major, _ := strconv.Atoi(m[1]); major < 1 || (major == 1 && atoi(m[2]) < minKubernetesMinor) {
			add("kubernetesVersion is %s, but the isolated-sandbox runtime (Nitro Sandboxes) needs Kubernetes 1.%d or newer; set kubernetesVersion to %s or later",
				c.KubernetesVersion, minKubernetesMinor, contract.KubernetesVersion)
		}
		if !eksClusterName.MatchString(c.ClusterName) {
			add("clusterName %q is not a valid EKS cluster name (1-100 letters, digits, '-' or '_', starting with a letter or digit)", c.ClusterName)
		}
		if c.Kubeconfig != "" || c.KubeContext != "" {
			add("kubeconfig/kubeContext are only used with clusterMode=existing; with clusterMode=create the program builds the kubeconfig itself, so remove them or set clusterMode=existing")
		}
		if c.VpcID == "" && len(c.PrivateSubnetIDs) > 0 {
			add("privateSubnetIds is set without vpcId; set vpcId to the VPC they belong to, or remove it to let the program build its own network")
		}
		if len(c.publicSubnetIDs) > 0 {
			add("publicSubnetIds is no longer used: the cluster gets only privateSubnetIds, because Auto Mode launches nodes in the cluster's subnets; remove it (`pulumi config rm publicSubnetIds`); internet-facing load balancers find public subnets by their kubernetes.io/role/elb tag")
		}
		c.validateAccess(add)
		c.validateCreateMode(add)
		c.validateSandboxNodes(add)
		if c.VpcID != "" && c.NatGatewayPerZone {
			add("natGatewayPerZone gives the stack's own network a NAT gateway per zone, but vpcId %s is a VPC of your own, whose way out is yours; remove it (`pulumi config rm natGatewayPerZone`)", c.VpcID)
		}
		if c.VpcID != "" && len(c.PrivateSubnetIDs) < 2 {
			add("vpcId is set but privateSubnetIds has %d subnet(s); EKS needs private subnets in at least two availability zones, so list at least two", len(c.PrivateSubnetIDs))
		}
		if c.AgentSandboxMode == components.ModeAdopt || c.KedaMode == components.ModeAdopt {
			add("agentSandboxMode/kedaMode=adopt read an install that is already on the cluster, but clusterMode=create makes a new, empty cluster; use install with clusterMode=create, or adopt with clusterMode=existing")
		}
	case components.ModeExisting:
		// A component's cluster is its kubernetes provider's, handed over by the caller.
		if strings.TrimSpace(c.Kubeconfig) == "" && !c.callersCluster {
			add("clusterMode=existing needs kubeconfig: set it to a kubeconfig file path or its contents, e.g. `pulumi config set kubeconfig ~/.kube/config` (and kubeContext to pick a context)")
		}
		if c.VpcID != "" || len(c.PrivateSubnetIDs) > 0 || len(c.publicSubnetIDs) > 0 {
			add("vpcId/privateSubnetIds/publicSubnetIds are only used with clusterMode=create; remove them for clusterMode=existing")
		}
		c.refuseCreateModeKeys(add)
		if len(c.AdminPrincipalArns) > 0 || c.PreviewPrincipalArn != "" {
			add("adminPrincipalArns/previewPrincipalArn create EKS access entries with a cluster the stack creates; with clusterMode=existing, grant access on that cluster yourself and remove them")
		}
		// Pulumi hands the program Pulumi.yaml's default like a value the stack set, so only a
		// version other than the default can be told apart as set; the default is ignored here.
		if c.KubernetesVersion != "" && c.KubernetesVersion != contract.KubernetesVersion {
			add("kubernetesVersion is %q, but it is only used with clusterMode=create (the version of the cluster the stack makes); an existing cluster keeps its own version, so remove it (`pulumi config rm kubernetesVersion`)", c.KubernetesVersion)
		}
	}

	if c.RuntimeClassMode == components.ModeCreate && !isDNSLabel(c.RuntimeClassHandler) {
		add("runtimeClassMode=create needs runtimeClassHandler, the CRI handler your nodes run sandboxes with (a DNS label such as kata-qemu); it is %q", c.RuntimeClassHandler)
	}
	if v, ok := strings.CutPrefix(c.AgentSandboxVersion, "v"); !ok || !exactSemver.MatchString(v) {
		add("agentSandboxVersion is %q; it must be the exact release tag of kubernetes-sigs/agent-sandbox, v then MAJOR.MINOR.PATCH, such as %s", c.AgentSandboxVersion, contract.AgentSandboxRelease)
	}
	if !exactSemver.MatchString(c.KedaChartVersion) {
		add("kedaChartVersion is %q; pin an exact chart version, MAJOR.MINOR.PATCH, such as %s (KEDA is a shared install: a range or wildcard would move it)", c.KedaChartVersion, contract.KedaChartVersion)
	}

	if c.KedaMode == components.ModeAdopt && c.kedaSet {
		add("%s", kedaSetMessage())
	} else if c.KedaMode == components.ModeInstall && c.kedaSet {
		validateKeda(c.Keda, add)
	}

	validateMonitoring(c.Monitoring, add)
	c.validateMonitoringInputs(add)

	checkNamespace("namespace", c.Namespace, add)
	pools := c.Pools()
	for _, p := range pools {
		c.validatePool(p, add)
	}
	// The top-level scaling rules once, named as the stack set them; a listed pool's own in its
	// validatePool. The bound named is the largest maxReplicas they apply to.
	ceiling := 0
	for _, p := range pools {
		ceiling = max(ceiling, p.MaxReplicas)
	}
	validateScalingRules(c.ScaleUp, ceiling, scaleUpDirection, add)
	validateScalingRules(c.ScaleDown, ceiling, scaleDownDirection, add)
	validateAcrossPools(c, pools, add)
	if c.ExporterImage != "" && !validImageReference(c.ExporterImage) {
		add("exporterImage %q is not an image reference; write it as [registry/]repository[:tag][@sha256:digest] with a lower-case repository, "+
			"e.g. 123456789012.dkr.ecr.us-west-2.amazonaws.com/claim-exporter:v1", c.ExporterImage)
	}
	c.validateExporterImage(add)

	if c.ExporterReplicas < 1 || c.ExporterReplicas > contract.MaxExporterReplicas {
		add("exporterReplicas is %d; it must be 1..%d: %d (the default) keeps one serving through a drain or a rollout, 1 saves a pod but leaves KEDA without a reading while it restarts",
			c.ExporterReplicas, contract.MaxExporterReplicas, contract.DefaultExporterReplicas)
	}

	if len(errs) == 0 {
		// Only on a config that is otherwise valid: the exporter's parser then checks the exact
		// list the program would render, so the two can never disagree; the NodePool is sized
		// from the pools' bounds and requests as they will be.
		c.validateExporterPools(add)
		c.validateSandboxNodePlan(add)
	}
	return errs
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// validateAccess checks the access-entry principals: ARN grammar, no principal twice, and the
// preview principal never also an admin (it would read with admin rights).
func (c *Config) validateAccess(add func(string, ...any)) {
	seen := map[string]bool{}
	for _, arn := range c.AdminPrincipalArns {
		if msg := components.CheckPrincipalArn("adminPrincipalArns", arn); msg != "" {
			add("%s", msg)
		}
		if seen[arn] {
			add("adminPrincipalArns lists %q twice; EKS allows one access entry per principal, so list it once", arn)
		}
		seen[arn] = true
	}
	if c.PreviewPrincipalArn == "" {
		return
	}
	if msg := components.CheckPrincipalArn("previewPrincipalArn", c.PreviewPrincipalArn); msg != "" {
		add("%s", msg)
	}
	if seen[c.PreviewPrincipalArn] {
		add("previewPrincipalArn %q is also in adminPrincipalArns; the preview role must be read-only, so give pull-request previews a role of their own", c.PreviewPrincipalArn)
	}
}

// resolveKubeconfig accepts a path or the contents and returns contents whose current context is
// kubeContext (when given): verify and the e2e read the exported kubeconfig without a context flag.
func resolveKubeconfig(pathOrContents, kubeContext string) (string, error) {
	contents := pathOrContents
	if looksLikePath(pathOrContents) {
		p := pathOrContents
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("kubeconfig %q: cannot expand ~: %w", p, err)
			}
			p = filepath.Join(home, p[2:])
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("invalid configuration: kubeconfig %q cannot be read (%v); set kubeconfig to an existing kubeconfig file or paste its contents", pathOrContents, err)
		}
		contents = string(b)
	}
	if strings.TrimSpace(contents) == "" {
		return "", errors.New("invalid configuration: kubeconfig is empty; set it to a kubeconfig file path or its contents")
	}
	if err := checkKubeconfigContext(contents, kubeContext); err != nil {
		return "", err
	}
	if kubeContext == "" {
		return contents, nil
	}
	return withCurrentContext(contents, kubeContext)
}

// kubeconfigDoc is the part of a kubeconfig that names contexts and clusters.
type kubeconfigDoc struct {
	CurrentContext string              `json:"current-context"`
	Contexts       []kubeconfigContext `json:"contexts"`
	Clusters       []kubeconfigCluster `json:"clusters"`
}

type kubeconfigContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
	} `json:"context"`
}

type kubeconfigCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server string `json:"server"`
	} `json:"cluster"`
}

// checkKubeconfigContext parses the kubeconfig (YAML or JSON) and requires a context named
// kubeContext (or, without one, its current-context) whose cluster it defines with a server.
func checkKubeconfigContext(contents, kubeContext string) error {
	var doc kubeconfigDoc
	if err := yaml.Unmarshal([]byte(contents), &doc); err != nil {
		return fmt.Errorf("invalid configuration: kubeconfig does not parse as a kubeconfig (%v); set it to a kubeconfig file path or its contents", err)
	}
	name, key := kubeContext, "kubeContext"
	if name == "" {
		name, key = doc.CurrentContext, "the kubeconfig's current-context"
	}
	var names []string
	for _, c := range doc.Contexts {
		names = append(names, strconv.Quote(c.Name))
	}
	list := "it has no contexts"
	if len(names) > 0 {
		list = "its contexts are " + strings.Join(names, ", ")
	}
	if name == "" {
		return fmt.Errorf("invalid configuration: the kubeconfig has no current-context and kubeContext is not set; set kubeContext to the context to use (%s)", list)
	}
	i := slices.IndexFunc(doc.Contexts, func(c kubeconfigContext) bool { return c.Name == name })
	if i < 0 {
		return fmt.Errorf("invalid configuration: %s %q is not a context of the kubeconfig (%s); list them with `kubectl config get-contexts`", key, name, list)
	}
	cluster := doc.Contexts[i].Context.Cluster
	for _, c := range doc.Clusters {
		if c.Name == cluster && c.Cluster.Server != "" {
			return nil
		}
	}
	return fmt.Errorf("invalid configuration: context %q names cluster %q, which the kubeconfig does not define with a server; fix the kubeconfig or choose another context (%s)", name, cluster, list)
}

func looksLikePath(s string) bool {
	t := strings.TrimSpace(s)
	return !strings.Contains(t, "\n") && !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "apiVersion")
}

var currentContextLine = regexp.MustCompile(`(?m)^current-context:.*$`)

// withCurrentContext sets current-context without a YAML library: kubeconfig's top-level key is
// always written on a line of its own; JSON kubeconfigs are handled as JSON.
func withCurrentContext(contents, kubeContext string) (string, error) {
	if strings.HasPrefix(strings.TrimSpace(contents), "{") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(contents), &doc); err != nil {
			return "", fmt.Errorf("invalid configuration: kubeconfig looks like JSON but does not parse: %w", err)
		}
		doc["current-context"] = kubeContext
		b, err := json.Marshal(doc)
		return string(b), err
	}
	quoted, _ := json.Marshal(kubeContext) // a JSON string is a valid YAML scalar
	line := "current-context: " + string(quoted)
	if currentContextLine.MatchString(contents) {
		return currentContextLine.ReplaceAllLiteralString(contents, line), nil
	}
	return strings.TrimRight(contents, "\n") + "\n" + line + "\n", nil
}

// checkNamespace refuses a name that is not a namespace's, or one the stack must not own.
func checkNamespace(key, ns string, add func(string, ...any)) {
	if !isDNSLabel(ns) {
		add("%s %q is not a valid Kubernetes namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", key, ns)
	} else if slices.Contains(ReservedNamespaces, ns) || strings.HasPrefix(ns, "kube-") {
		add("%s %q belongs to Kubernetes or a shared install (%s, any kube-*); the stack owns and deletes its namespace, so choose a namespace of its own such as %s",
			key, ns, strings.Join(ReservedNamespaces, ", "), contract.DefaultNamespace)
	}
}
