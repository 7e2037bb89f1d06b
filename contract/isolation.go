package contract

// The isolation the sandbox runtime gives, as the stack declares it (config and output
// isolation) and verify judges the readings against it.
const (
	IsolationVM     = "vm"     // EKS Auto Mode's Nitro Sandboxes
	IsolationGVisor = "gvisor" // the local control plane's real node
)
