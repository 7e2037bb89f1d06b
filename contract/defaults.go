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
)
