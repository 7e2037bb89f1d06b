package localcluster

import (
	"strconv"
)

// startAgentSandboxController starts agent-sandbox's controller (with its
// extensions: templates, warm pools, claims).
func (c *Cluster) startAgentSandboxController(admin string) error {
	_, err := c.procs.Start("agent-sandbox-controller", c.Binaries.Path("agent-sandbox-controller"), []string{
		"--kubeconfig=" + admin,
		"--extensions=true",
		// No webhook server locally; the CRDs were applied with conversion None.
		"--enable-webhook=false",
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.sandboxMetrics),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(c.ports.sandboxHealth),
	}, "KUBECONFIG="+admin)
	return err
}
