// A warm pool of pre-booted, VM-isolated agent sandboxes (kubernetes-sigs/agent-sandbox) whose size follows SandboxClaim demand through KEDA, on a cluster you already have.
package warmpool
