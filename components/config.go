package components

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

// Names and pins shared by the program, verify and the e2e (see the README's config table).
const (
	ConfigNamespace = "warm-pool-autoscaling-keda"

	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "warm-pool-autoscaling-keda"
	// StackLabel carries "<project>.<stack>" so verify and clean-up can tell this stack's namespace apart.
	StackLabel  = "warm-pool-autoscaling-keda/stack"
	PartOfLabel = "app.kubernetes.io/part-of"

	RuntimeClassName = "isolated-sandbox"
	ScaledObjectName = "warm-pool"
	ExporterName     = "claim-exporter"
	ExporterPort     = 8080

	DefaultNamespace           = "warm-pool-autoscaling-keda"
	DefaultPoolName            = "warm-pool"
	DefaultTemplateName        = "warm-pool-agent"
	DefaultKubernetesVersion   = "1.36"
	DefaultAgentSandboxVersion = "v1.0.10"
	DefaultKedaChartVersion    = "2.21.0"
	DefaultMinReplicas         = 1
	DefaultMaxReplicas         = 3
	DefaultTargetValue         = "1"
	DefaultLoadCap             = 3
	DefaultPollingInterval     = 15
	DefaultFallbackReplicas    = 0
	DefaultHeadroom            = 0

	// Nitro Sandboxes (the isolated-sandbox RuntimeClass on Auto Mode) need Kubernetes 1.36 or newer.
	minKubernetesMinor = 36
)

// Modes, spelled as the config takes them.
const (
	ModeCreate   = "create"
	ModeExisting = "existing"
	ModeRequire  = "require"
	ModeInstall  = "install"
	ModeAdopt    = "adopt"
)

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
	PublicSubnetIDs   []string
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

	MinReplicas           int
	MaxReplicas           int
	TargetValue           string
	ActivationTargetValue string
	LoadCap               int
	PollingInterval       int
	FallbackReplicas      int
	// Headroom is how many warm sandboxes the pool keeps above demand:
	// desired = ceil(claims / targetValue) + Headroom (0: the blueprint's mapping).
	Headroom int

	ExporterImage string
	ExporterURL   string
	ClaimSelector string
}

// StackLabelValue is the value of StackLabel on this stack's namespace.
func (c *Config) StackLabelValue() string { return c.Project + "." + c.Stack }

// InClusterExporterURL is the URL KEDA reads unless exporterUrl overrides it.
func (c *Config) InClusterExporterURL() string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d/demand", ExporterName, c.Namespace, ExporterPort)
}

// LoadConfig reads the project's config, applies the defaults and validates it. It registers
// nothing, so a bad config fails the run before any resource exists.
func LoadConfig(ctx *pulumi.Context) (*Config, error) {
	cfg := config.New(ctx, ConfigNamespace)
	getInt := func(key string, def int, errs *[]string) int {
		raw, err := cfg.Try(key)
		if err != nil {
			return def
		}
		n, convErr := strconv.Atoi(strings.TrimSpace(raw))
		if convErr != nil {
			*errs = append(*errs, fmt.Sprintf("%s is %q, which is not a whole number; set it with `pulumi config set %s <integer>`", key, raw, key))
			return def
		}
		return n
	}
	getList := func(key string, errs *[]string) []string {
		raw, err := cfg.Try(key)
		if err != nil || strings.TrimSpace(raw) == "" {
			return nil
		}
		var list []string
		if json.Unmarshal([]byte(raw), &list) == nil {
			return list
		}
		// Also accept "a,b" for convenience on the command line.
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		return list
	}
	str := func(key, def string) string {
		if v, err := cfg.Try(key); err == nil && v != "" {
			return v
		}
		return def
	}

	var parseErrs []string
	c := &Config{
		Project:               ctx.Project(),
		Stack:                 ctx.Stack(),
		ClusterMode:           str("clusterMode", ModeCreate),
		ClusterName:           str("clusterName", ""),
		KubernetesVersion:     str("kubernetesVersion", DefaultKubernetesVersion),
		VpcID:                 str("vpcId", ""),
		PrivateSubnetIDs:      getList("privateSubnetIds", &parseErrs),
		PublicSubnetIDs:       getList("publicSubnetIds", &parseErrs),
		Kubeconfig:            str("kubeconfig", ""),
		KubeContext:           str("kubeContext", ""),
		RuntimeClassMode:      str("runtimeClassMode", ModeRequire),
		RuntimeClassHandler:   str("runtimeClassHandler", ""),
		AgentSandboxMode:      str("agentSandboxMode", ModeInstall),
		AgentSandboxVersion:   str("agentSandboxVersion", DefaultAgentSandboxVersion),
		KedaMode:              str("kedaMode", ModeInstall),
		KedaChartVersion:      str("kedaChartVersion", DefaultKedaChartVersion),
		Namespace:             str("namespace", DefaultNamespace),
		PoolName:              str("poolName", DefaultPoolName),
		TemplateName:          str("templateName", DefaultTemplateName),
		MinReplicas:           getInt("minReplicas", DefaultMinReplicas, &parseErrs),
		MaxReplicas:           getInt("maxReplicas", DefaultMaxReplicas, &parseErrs),
		TargetValue:           str("targetValue", DefaultTargetValue),
		ActivationTargetValue: str("activationTargetValue", ""),
		LoadCap:               getInt("loadCap", DefaultLoadCap, &parseErrs),
		PollingInterval:       getInt("pollingInterval", DefaultPollingInterval, &parseErrs),
		FallbackReplicas:      getInt("fallbackReplicas", DefaultFallbackReplicas, &parseErrs),
		Headroom:              getInt("headroom", DefaultHeadroom, &parseErrs),
		ExporterImage:         str("exporterImage", ""),
		ExporterURL:           str("exporterUrl", ""),
		ClaimSelector:         str("claimSelector", ""),
	}
	if c.ClusterName == "" {
		if c.ClusterMode == ModeExisting {
			c.ClusterName = c.KubeContext
		} else {
			c.ClusterName = c.Project + "-" + c.Stack
		}
	}
	if err := c.Validate(parseErrs...); err != nil {
		return nil, err
	}
	if c.ClusterMode == ModeExisting {
		contents, err := resolveKubeconfig(c.Kubeconfig, c.KubeContext)
		if err != nil {
			return nil, err
		}
		c.Kubeconfig = contents
	}
	return c, nil
}

var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	eksClusterName   = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	kubeVersion      = regexp.MustCompile(`^v?(\d+)\.(\d+)$`)
	labelSelector    = regexp.MustCompile(`^[A-Za-z0-9_./!=,()\- ]*$`)
)

// Validate checks every rule at once, so one run reports every mistake; each message names the key,
// what is wrong and how to fix it.
func (c *Config) Validate(earlier ...string) error {
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

	oneOf("clusterMode", c.ClusterMode, ModeCreate, ModeExisting)
	oneOf("runtimeClassMode", c.RuntimeClassMode, ModeRequire, ModeCreate)
	oneOf("agentSandboxMode", c.AgentSandboxMode, ModeInstall, ModeAdopt)
	oneOf("kedaMode", c.KedaMode, ModeInstall, ModeAdopt)

	switch c.ClusterMode {
	case ModeCreate:
		if m := kubeVersion.FindStringSubmatch(c.KubernetesVersion); m == nil {
			add("kubernetesVersion is %q; write it as MAJOR.MINOR, e.g. %s", c.KubernetesVersion, DefaultKubernetesVersion)
		} else if major, _ := strconv.Atoi(m[1]); major < 1 || (major == 1 && atoi(m[2]) < minKubernetesMinor) {
			add("kubernetesVersion is %s, but the isolated-sandbox runtime (Nitro Sandboxes) needs Kubernetes 1.%d or newer; set kubernetesVersion to %s or later",
				c.KubernetesVersion, minKubernetesMinor, DefaultKubernetesVersion)
		}
		if !eksClusterName.MatchString(c.ClusterName) {
			add("clusterName %q is not a valid EKS cluster name (1-100 letters, digits, '-' or '_', starting with a letter or digit)", c.ClusterName)
		}
		if c.Kubeconfig != "" || c.KubeContext != "" {
			add("kubeconfig/kubeContext are only used with clusterMode=existing; with clusterMode=create the program builds the kubeconfig itself, so remove them or set clusterMode=existing")
		}
		if c.VpcID == "" && (len(c.PrivateSubnetIDs) > 0 || len(c.PublicSubnetIDs) > 0) {
			add("privateSubnetIds/publicSubnetIds are set without vpcId; set vpcId to the VPC they belong to, or remove them to let the program build its own network")
		}
		if c.VpcID != "" && len(c.PrivateSubnetIDs) < 2 {
			add("vpcId is set but privateSubnetIds has %d subnet(s); EKS needs private subnets in at least two availability zones, so list at least two", len(c.PrivateSubnetIDs))
		}
		if c.AgentSandboxMode == ModeAdopt || c.KedaMode == ModeAdopt {
			add("agentSandboxMode/kedaMode=adopt read an install that is already on the cluster, but clusterMode=create makes a new, empty cluster; use install with clusterMode=create, or adopt with clusterMode=existing")
		}
	case ModeExisting:
		if strings.TrimSpace(c.Kubeconfig) == "" {
			add("clusterMode=existing needs kubeconfig: set it to a kubeconfig file path or its contents, e.g. `pulumi config set kubeconfig ~/.kube/config` (and kubeContext to pick a context)")
		}
		if c.VpcID != "" || len(c.PrivateSubnetIDs) > 0 || len(c.PublicSubnetIDs) > 0 {
			add("vpcId/privateSubnetIds/publicSubnetIds are only used with clusterMode=create; remove them for clusterMode=existing")
		}
	}

	if c.RuntimeClassMode == ModeCreate && !dns1123Label.MatchString(c.RuntimeClassHandler) {
		add("runtimeClassMode=create needs runtimeClassHandler, the CRI handler your nodes run sandboxes with (a DNS label such as kata-qemu); it is %q", c.RuntimeClassHandler)
	}
	if !strings.HasPrefix(c.AgentSandboxVersion, "v") || strings.ContainsAny(c.AgentSandboxVersion, "/ ") {
		add("agentSandboxVersion is %q; it must be a release tag of kubernetes-sigs/agent-sandbox such as %s", c.AgentSandboxVersion, DefaultAgentSandboxVersion)
	}
	if strings.TrimSpace(c.KedaChartVersion) == "" || strings.ContainsAny(c.KedaChartVersion, "^~*<> ") {
		add("kedaChartVersion is %q; pin an exact chart version such as %s (KEDA is a shared install, ranges would move it)", c.KedaChartVersion, DefaultKedaChartVersion)
	}

	if len(c.Namespace) > 63 || !dns1123Label.MatchString(c.Namespace) {
		add("namespace %q is not a valid Kubernetes namespace name (lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit)", c.Namespace)
	}
	for _, n := range []struct{ key, value string }{{"poolName", c.PoolName}, {"templateName", c.TemplateName}} {
		// 63, not 253: the pool's name ends up in KEDA's HPA name and in label values.
		if len(n.value) > 63 || !dns1123Subdomain.MatchString(n.value) {
			add("%s %q is not a valid Kubernetes object name (lower-case letters, digits, '-' and '.', at most 63, starting and ending with a letter or digit)", n.key, n.value)
		}
	}

	if c.MinReplicas < 0 {
		add("minReplicas is %d; it cannot be negative (0 allows scale-to-zero, 1 keeps one warm sandbox at rest)", c.MinReplicas)
	}
	if c.MaxReplicas < 1 {
		add("maxReplicas is %d; it must be at least 1", c.MaxReplicas)
	}
	if c.MinReplicas > c.MaxReplicas {
		add("minReplicas (%d) is greater than maxReplicas (%d); lower minReplicas or raise maxReplicas", c.MinReplicas, c.MaxReplicas)
	}
	if c.LoadCap < 1 || c.LoadCap > c.MaxReplicas {
		add("loadCap is %d; it must be between 1 and maxReplicas (%d), so verify never asks for more warm capacity than the pool's bound", c.LoadCap, c.MaxReplicas)
	}
	if v, err := strconv.ParseFloat(c.TargetValue, 64); err != nil || v <= 0 {
		add("targetValue is %q; it must be a number greater than 0 (KEDA divides the claim count by it), e.g. \"1\" for one warm sandbox per active claim", c.TargetValue)
	}
	if c.ActivationTargetValue != "" {
		if v, err := strconv.ParseFloat(c.ActivationTargetValue, 64); err != nil || v < 0 {
			add("activationTargetValue is %q; it must be a number of 0 or more, or empty", c.ActivationTargetValue)
		}
	}
	if c.PollingInterval < 1 || c.PollingInterval > 3600 {
		add("pollingInterval is %d; it must be between 1 and 3600 seconds", c.PollingInterval)
	}
	if c.FallbackReplicas < 0 || c.FallbackReplicas > c.MaxReplicas {
		add("fallbackReplicas is %d; it must be between 0 (hold the current size when the exporter cannot answer) and maxReplicas (%d)", c.FallbackReplicas, c.MaxReplicas)
	}
	if c.Headroom < 0 || c.Headroom >= c.MaxReplicas {
		add("headroom is %d; it must be between 0 (one warm sandbox per targetValue claims, nothing more) and maxReplicas-1 (%d): at maxReplicas or more the pool never leaves its maximum, which is a fixed pool (set minReplicas=maxReplicas instead)", c.Headroom, c.MaxReplicas-1)
	}
	if c.Headroom > 0 && c.MinReplicas == 0 {
		add("headroom is %d with minReplicas 0: the headroom keeps at least %d warm sandboxes, so the pool can never scale to zero; set minReplicas to 1 or more, or headroom to 0", c.Headroom, c.Headroom)
	}
	if c.ExporterURL != "" && !strings.HasPrefix(c.ExporterURL, "http://") && !strings.HasPrefix(c.ExporterURL, "https://") {
		add("exporterUrl is %q; it must be an http:// or https:// URL that serves the exporter's /demand JSON", c.ExporterURL)
	}
	if !labelSelector.MatchString(c.ClaimSelector) {
		add("claimSelector %q is not a Kubernetes label selector (e.g. app.kubernetes.io/part-of=warm-pool-autoscaling-keda)", c.ClaimSelector)
	}
	if strings.ContainsAny(c.ExporterImage, " \t\n") {
		add("exporterImage %q is not an image reference", c.ExporterImage)
	}

	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration (keys under %s:):\n  - %s", ConfigNamespace, strings.Join(errs, "\n  - "))
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

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
	if kubeContext == "" {
		return contents, nil
	}
	return withCurrentContext(contents, kubeContext)
}

func looksLikePath(s string) bool {
	t := strings.TrimSpace(s)
	return !strings.Contains(t, "\n") && !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "apiVersion")
}

var currentContextLine = regexp.MustCompile(`(?m)^current-context:.*$`)

// withCurrentContext sets current-context without a YAML library: kubeconfig's top-level key is
// always written on a line of its own; JSON kubeconfigs are handled as JSON.
func withCurrentContext(contents, kubeContext string) (string, error) {
	if !strings.Contains(contents, kubeContext) {
		return "", fmt.Errorf("invalid configuration: kubeContext %q does not appear in the kubeconfig; list contexts with `kubectl config get-contexts`", kubeContext)
	}
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
