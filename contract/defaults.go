package contract

// ProjectName is the Pulumi project, its config namespace and the label prefix.
const ProjectName = "warm-pool-autoscaling-keda"

// The stack's defaults (Pulumi.yaml declares the same; a test in program keeps them in step),
// which verify and the tests assume when no stack output says otherwise.
const (
	DefaultNamespace        = ProjectName
	DefaultPoolName         = "warm-pool"
	DefaultTemplateName     = "warm-pool-agent"
	ScaledObjectName        = "warm-pool"
	DefaultMinReplicas      = 1
	DefaultMaxReplicas      = 3
	DefaultTargetValue      = "1"
	DefaultLoadCap          = 3
	DefaultPollingInterval  = 15
	DefaultFallbackReplicas = 0
	DefaultHeadroom         = 0
	// DefaultExporterReplicas: two, so a voluntary disruption (a drain, a rollout, Auto Mode's
	// consolidation) always leaves one serving and KEDA never loses its reading.
	DefaultExporterReplicas = 2
	// MaxExporterReplicas: every replica lists the claims on each read; more than a few only
	// multiplies API reads.
	MaxExporterReplicas = 5
)
