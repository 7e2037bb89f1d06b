package program

import (
	"strconv"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
	"warmpool.local/warm-pool-autoscaling-keda/monitoring"
	"warmpool.local/warm-pool-autoscaling-keda/schedule"
)

// The shapes of the structured keys (template, sizing, scaleUp, scaleDown, keda, monitoring,
// pools) and the values of the keys that take one of a few: one definition, used three ways.
// The package schema's object and enum types are generated from it (provider/schema_test.go);
// the config reader is held to it (a test runs every reader and compares the fields it reads,
// and how, with these); Pulumi.yaml's description of each key names every field of its shape
// (stackconfig_test.go). Values and defaults come from the constants the reader applies.

// FieldType is how a field of a structured key is written.
type FieldType string

const (
	FieldString  FieldType = "string"
	FieldInteger FieldType = "integer"
	// FieldNumber is a decimal; the reader takes it as text too (`pulumi config set --path`).
	FieldNumber  FieldType = "number"
	FieldBoolean FieldType = "boolean"
	// FieldStrings is a list of text.
	FieldStrings FieldType = "strings"
	// FieldStringMap is names to text (env, labels, requests).
	FieldStringMap FieldType = "stringMap"
	// FieldObject is one object of the shape Of; FieldObjects a list of them.
	FieldObject  FieldType = "object"
	FieldObjects FieldType = "objects"
)

// Field is one key of a structured value.
type Field struct {
	Name string
	Type FieldType
	// Of names the InputShape of an object field, or the InputEnum of a string field (Enum).
	Of   string
	Enum string
	// Default is what the reader applies when the field is unset, as a reader would write it
	// (empty: none, or one that depends on other keys, which Description says).
	Default     string
	Required    bool
	Description string
}

// InputShape is the shape of a structured value: an object type of the package schema.
type InputShape struct {
	Name        string
	Description string
	Fields      []Field
}

// InputEnum is a key's or a field's closed set of values.
type InputEnum struct {
	Name        string
	Description string
	Values      []EnumValue
}

// EnumValue is one value of an InputEnum.
type EnumValue struct{ Value, Description string }

// StructuredInputs are the top-level keys whose values are shaped: the key to its shape's name;
// pools is a list of Pool.
var StructuredInputs = map[string]string{
	"template": "Template", "sizing": "Sizing", "scaleUp": "ScalingRules", "scaleDown": "ScalingRules",
	"keda": "Keda", "monitoring": "Monitoring", "pools": "Pool",
}

// EnumInputs are the top-level keys that take one of an InputEnum's values.
var EnumInputs = map[string]string{
	"kedaMode": "KedaMode", "agentSandboxMode": "AgentSandboxMode", "runtimeClassMode": "RuntimeClassMode",
	"isolation": "Isolation", "exporterImagePlatform": "ExporterImagePlatform",
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// InputEnums are every enum of the inputs, by name.
func InputEnums() map[string]InputEnum {
	platforms := InputEnum{Name: "ExporterImagePlatform", Description: "The platform of the exporter's image the stack builds (unset: linux/amd64)."}
	for _, p := range exporterimage.Platforms {
		platforms.Values = append(platforms.Values, EnumValue{p, "Built for " + p + "; the exporter's pods are kept to its nodes."})
	}
	return map[string]InputEnum{
		"KedaMode": {Name: "KedaMode", Description: "Whether the stack installs KEDA or adopts the cluster's.", Values: []EnumValue{
			{components.ModeInstall, "The kedacore/keda Helm chart in namespace keda."},
			{components.ModeAdopt, "Only check scaledobjects.keda.sh exists and serves v1alpha1; never upgrade, re-value or move it."},
		}},
		"AgentSandboxMode": {Name: "AgentSandboxMode", Description: "Whether the stack installs agent-sandbox or adopts the cluster's.", Values: []EnumValue{
			{components.ModeInstall, "Apply the pinned agent-sandbox release manifest."},
			{components.ModeAdopt, "Only check its CRDs exist and serve v1beta1; never change or delete them."},
		}},
		"RuntimeClassMode": {Name: "RuntimeClassMode", Description: "Whether the sandboxes' RuntimeClass is required or created.", Values: []EnumValue{
			{components.ModeRequire, "Read RuntimeClass isolated-sandbox and stop if it is absent (EKS Auto Mode has it)."},
			{components.ModeCreate, "Make it with runtimeClassHandler."},
		}},
		"Isolation": {Name: "Isolation", Description: "The isolation the sandbox runtime gives, exported for verify.", Values: []EnumValue{
			{contract.IsolationVM, "EKS Nitro Sandboxes."},
			{contract.IsolationGVisor, "gVisor, the local control plane's stand-in."},
		}},
		"ExporterImagePlatform": platforms,
		"SizingPolicy": {Name: "SizingPolicy", Description: "How the ScaledObject sizes a pool.", Values: []EnumValue{
			{components.SizingClaims, "ceil(claims / targetValue) + headroom, the blueprint's."},
			{components.SizingArrivals, "The Poisson quantile of the claims that arrive within bootSeconds (one refill), plus one, plus headroom."},
		}},
		"ScalingPolicy": {Name: "ScalingPolicy", Description: "What an HPA scaling policy's value counts.", Values: []EnumValue{
			{components.PolicyPods, "At most value sandboxes per periodSeconds."},
			{components.PolicyPercent, "At most value percent of the pool per periodSeconds."},
		}},
	}
}

// InputShapes are every shape of the structured inputs, by name.
func InputShapes() map[string]InputShape {
	sizing, th := components.DefaultSizing(), monitoring.DefaultThresholds()
	shapes := []InputShape{
		{Name: "Template", Description: "A pool's agent container. The RuntimeClass, no network, no ServiceAccount token and the restricted security settings are the program's and cannot be set.", Fields: []Field{
			{Name: "image", Type: FieldString, Default: contract.WarmPodImage, Description: "The agent's image, with a tag other than latest or a digest. Unset: the blueprint's busybox placeholder, running `sleep infinity`."},
			{Name: "command", Type: FieldStrings, Description: "The container's command (entrypoint)."},
			{Name: "args", Type: FieldStrings, Description: "The command's arguments."},
			{Name: "workingDir", Type: FieldString, Description: "The container's working directory."},
			{Name: "env", Type: FieldStringMap, Description: "Environment variables, name to value."},
			{Name: "resources", Type: FieldObject, Of: "Resources", Description: "Requests and limits: cpu, memory, ephemeral-storage. A VM-isolated sandbox reserves its memory request when it boots, so requests decide cost and packing."},
			{Name: "runAsUser", Type: FieldInteger, Default: itoa(components.SandboxUID), Description: "The user the agent runs as; never root."},
			{Name: "readOnlyRootFilesystem", Type: FieldBoolean, Default: "false", Description: "Mount the image's filesystem read-only (write to scratch)."},
			{Name: "scratch", Type: FieldObject, Of: "Scratch", Description: "A writable emptyDir for the agent."},
		}},
		{Name: "Resources", Description: "A container's requests and limits, resource name to Kubernetes quantity.", Fields: []Field{
			{Name: "requests", Type: FieldStringMap, Description: "What the container is given at least, e.g. cpu: 500m, memory: 1Gi."},
			{Name: "limits", Type: FieldStringMap, Description: "The most the container may use."},
		}},
		{Name: "Scratch", Description: "A writable emptyDir in the sandbox.", Fields: []Field{
			{Name: "mountPath", Type: FieldString, Description: "Where the agent sees it (an absolute path)."},
			{Name: "sizeLimit", Type: FieldString, Description: "Its size limit, a Kubernetes quantity such as 1Gi."},
		}},
		{Name: "Sizing", Description: "How the ScaledObject sizes a pool; see docs/configuration.md.", Fields: []Field{
			{Name: "policy", Type: FieldString, Enum: "SizingPolicy", Default: sizing.Policy, Description: "claims: ceil(claims/targetValue)+headroom; arrivals: the Poisson quantile of the claims that arrive within bootSeconds, one refill."},
			{Name: "bootSeconds", Type: FieldInteger, Default: itoa(sizing.BootSeconds), Description: "Seconds a new sandbox takes from creation to Ready (1..600)."},
			{Name: "hpaSyncSeconds", Type: FieldInteger, Default: itoa(sizing.HPASyncSeconds), Description: "The HPA's sync period: the shortest shortWindowSeconds allowed."},
			{Name: "shortWindowSeconds", Type: FieldInteger, Default: itoa(sizing.ShortWindowSeconds), Description: "The shorter window the arrival rate is counted over."},
			{Name: "longWindowSeconds", Type: FieldInteger, Default: itoa(sizing.LongWindowSeconds), Description: "The longer window the arrival rate is counted over."},
			{Name: "warmHitTarget", Type: FieldNumber, Default: ftoa(sizing.WarmHitTarget), Description: "The share of claims that should find a warm sandbox, a decimal such as 0.99."},
			{Name: "nodeLaunchSeconds", Type: FieldInteger, Default: itoa(sizing.NodeLaunchSeconds), Description: "arrivals only: a new node's launch to Ready (0..900), joining bootSeconds in the refill."},
			{Name: "sandboxesPerNode", Type: FieldInteger, Default: itoa(sizing.SandboxesPerNode), Description: "arrivals only: K (1..110); K>1 rounds the pool up to whole nodes."},
			{Name: "schedule", Type: FieldObjects, Of: "ScheduleWindow", Description: "arrivals only: at most 24 time-of-day floors."},
		}},
		{Name: "ScheduleWindow", Description: "A time-of-day floor of warm sandboxes (one KEDA cron trigger).", Fields: []Field{
			{Name: "start", Type: FieldString, Required: true, Description: "When the window opens: a five-field cron expression, e.g. 0 8 * * 1-5."},
			{Name: "end", Type: FieldString, Required: true, Description: "When it closes: a five-field cron expression."},
			{Name: "timezone", Type: FieldString, Default: schedule.DefaultTimezone, Description: "The IANA zone start and end are read in."},
			{Name: "warm", Type: FieldInteger, Required: true, Description: "The fewest spare warm sandboxes inside the window (1..maxReplicas)."},
		}},
		{Name: "ScalingRules", Description: "How the HPA lets a pool grow (scaleUp) or shrink (scaleDown).", Fields: []Field{
			{Name: "stabilizationWindowSeconds", Type: FieldInteger, Description: "0..3600; scaleUp keeps the lowest size recommended within it (default 0), scaleDown the highest (default " + itoa(components.DefaultScaleDownWindowSeconds) + ")."},
			{Name: "policy", Type: FieldString, Enum: "ScalingPolicy", Description: "Pods or Percent, with value; unset: any change in one HPA sync (scaleUp up to maxReplicas)."},
			{Name: "value", Type: FieldInteger, Description: "At most this many sandboxes (Pods), or this percent of the pool (Percent), per periodSeconds; needed with policy."},
			{Name: "periodSeconds", Type: FieldInteger, Default: itoa(components.DefaultScalingPeriodSeconds), Description: "The policy's period (1..1800)."},
		}},
		{Name: "Keda", Description: "KEDA's install values (kedaMode install only; refused with adopt).", Fields: []Field{
			{Name: "operatorReplicas", Type: FieldInteger, Default: itoa(defaultKedaOperatorReplicas), Description: "KEDA operator pods (1..5), with a PodDisruptionBudget of minAvailable 1 from 2."},
			{Name: "metricsServerReplicas", Type: FieldInteger, Default: itoa(defaultKedaMetricsServerReplicas), Description: "KEDA metrics server pods (1..5), with a PodDisruptionBudget of minAvailable 1 from 2."},
			{Name: "resources", Type: FieldObject, Of: "KedaResources", Description: "The two pods' requests and limits (cpu, memory); unset: the chart's."},
			{Name: "serviceMonitor", Type: FieldBoolean, Default: "false", Description: "A ServiceMonitor for each of KEDA's pods; needs the Prometheus Operator's CRDs."},
		}},
		{Name: "KedaResources", Description: "The requests and limits of KEDA's two pods.", Fields: []Field{
			{Name: "operator", Type: FieldObject, Of: "Resources", Description: "The operator's (the chart's: 100m/100Mi requested, 1/1000Mi limit)."},
			{Name: "metricServer", Type: FieldObject, Of: "Resources", Description: "The metrics server's."},
		}},
		{Name: "Monitoring", Description: "The exporter's ServiceMonitor and the stack's alerting rules (a PrometheusRule), both off; the rule settings apply only with rules. See docs/configuration.md.", Fields: []Field{
			{Name: "serviceMonitor", Type: FieldBoolean, Default: "false", Description: "Scrape the exporter through its Service; needs the Prometheus Operator."},
			{Name: "rules", Type: FieldBoolean, Default: "false", Description: "The alerting rules; needs serviceMonitor."},
			{Name: "scrapeInterval", Type: FieldString, Default: defaultScrapeInterval, Description: "10s..5m (at most 75s with rules)."},
			{Name: "labels", Type: FieldStringMap, Description: "Labels on both objects, for the Prometheus' selectors."},
			{Name: "namespaceLabel", Type: FieldString, Default: defaultNamespaceLabel, Description: "Where KEDA's and agent-sandbox's namespace label lands after the scrape."},
			{Name: "runbookURL", Type: FieldString, Default: monitoring.DefaultRunbookURL, Description: "The address of your copy of the runbook (http or https, no #)."},
			{Name: "frozenFor", Type: FieldString, Default: th.FrozenFor, Description: "WarmPoolFrozen and WarmPoolCountStale's for (1m..1h)."},
			{Name: "readFailureRatio", Type: FieldNumber, Default: ftoa(th.ReadFailureRatio), Description: "The share of KEDA's reads that fail for WarmPoolFrozen, (0, 1]."},
			{Name: "coldLaunchRatio", Type: FieldNumber, Default: ftoa(th.ColdRatio), Description: "The share of cold launches WarmPoolColdLaunchesHigh fires above, (0, 1)."},
			{Name: "coldLaunchWindow", Type: FieldString, Default: th.ColdWindow, Description: "The window that share is counted over (5m..24h)."},
			{Name: "coldLaunchMinClaims", Type: FieldInteger, Default: itoa(th.ColdMinClaims), Description: "The fewest claims in the window for the share to count."},
			{Name: "coldLaunchFor", Type: FieldString, Default: th.ColdFor, Description: "WarmPoolColdLaunchesHigh's for (1m..6h)."},
			{Name: "exporterDownFor", Type: FieldString, Default: th.ExporterDownFor, Description: "ClaimExporterDown's for (1m..1h)."},
			{Name: "refusedPoolsFor", Type: FieldString, Default: th.RefusedPoolsFor, Description: "ClaimExporterRefusedPools' for (1m..1h)."},
			{Name: "pinnedAtMaxFor", Type: FieldString, Default: th.PinnedFor, Description: "WarmPoolPinnedAtMax's for (1m..6h)."},
			{Name: "unschedulableFor", Type: FieldString, Default: th.UnschedulableFor, Description: "WarmPoolSandboxesUnschedulable's pod age (2m..1h)."},
			{Name: "controllerDownFor", Type: FieldString, Default: th.ControllerDownFor, Description: "KedaOperatorDown, KedaMetricsServerDown and AgentSandboxControllerDown's for (1m..1h)."},
		}},
		{Name: "Pool", Description: "One pool of several, in its own namespace with its own ScaledObject; unset bounds take the top-level values.", Fields: []Field{
			{Name: "name", Type: FieldString, Required: true, Description: "The pool's name (at most 40 characters): its SandboxWarmPool, its ScaledObject and its exporter path /demand/<name>."},
			{Name: "namespace", Type: FieldString, Description: "The pool's namespace, which the stack owns. Default: <namespace>-<name>."},
			{Name: "templateName", Type: FieldString, Description: "Its SandboxTemplate. Default: <name>-agent."},
			{Name: "template", Type: FieldObject, Of: "Template", Description: "Its agent container. Unset: the placeholder."},
			{Name: "sizing", Type: FieldObject, Of: "Sizing", Description: "Its sizing policy. Unset: claims."},
			{Name: "scaleUp", Type: FieldObject, Of: "ScalingRules", Description: "How its HPA grows it. Unset: the top-level scaleUp."},
			{Name: "scaleDown", Type: FieldObject, Of: "ScalingRules", Description: "How its HPA shrinks it. Unset: the top-level scaleDown."},
			{Name: "minReplicas", Type: FieldInteger, Description: "Its floor. Default: the top-level minReplicas."},
			{Name: "maxReplicas", Type: FieldInteger, Description: "Its ceiling. Default: the top-level maxReplicas."},
			{Name: "targetValue", Type: FieldString, Description: "Claims per warm sandbox, a decimal above 0 with at most 3 decimals. Default: the top-level targetValue."},
			{Name: "activationTargetValue", Type: FieldString, Description: "Only with minReplicas 0: the pool wakes when claims exceed it."},
			{Name: "headroom", Type: FieldInteger, Default: "0", Description: "Warm sandboxes kept above demand."},
			{Name: "fallbackReplicas", Type: FieldInteger, Description: "Its size when the exporter fails 3 reads in a row. Default: the top-level fallbackReplicas."},
			{Name: "pollingInterval", Type: FieldInteger, Description: "Its ScaledObject's pollingInterval in seconds. Default: the top-level pollingInterval."},
			{Name: "loadCap", Type: FieldInteger, Description: "The most claims verify may create in it. Default: the top-level loadCap."},
			{Name: "claimSelector", Type: FieldString, Description: "The label selector of the claims the exporter counts for it (empty: every claim in its namespace)."},
			{Name: "exporterUrl", Type: FieldString, Description: "Override the URL KEDA reads for it."},
		}},
	}
	out := map[string]InputShape{}
	for _, s := range shapes {
		out[s.Name] = s
	}
	return out
}
