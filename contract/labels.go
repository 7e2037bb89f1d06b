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
