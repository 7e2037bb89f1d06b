package contract

// Labels the stack puts on what it makes, so verify and clean-up can tell its objects apart.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = ProjectName
	// StackLabel carries "<project>.<stack>" on the stack's namespace.
	StackLabel  = ProjectName + "/stack"
	PartOfLabel = "app.kubernetes.io/part-of"
)

// RuntimeClassName is the RuntimeClass of the warm sandboxes: Auto Mode's isolated runtime on
// EKS, a stand-in of the same name on the local control plane.
const RuntimeClassName = "isolated-sandbox"

// The stack's own NodeClass and NodePool for its sandboxes (create mode, sandboxNodePool): the
// sandbox pods select the NodePool by its name (the label karpenter.sh/nodepool) and tolerate its
// taint, SandboxNodeTaintKey=true:NoSchedule, which keeps every other pod off its nodes. Auto Mode
// reserves the NodeClass name "default".
const (
	SandboxNodeClassName = "warm-pool-sandboxes"
	SandboxNodePoolName  = "warm-pool-sandboxes"
	SandboxNodeTaintKey  = ProjectName + "/sandboxes"
)
