package procspec

import (
	"strconv"
	"time"
)

// AgentSandboxSettings are what agent-sandbox's controller's command line
// depends on.
type AgentSandboxSettings struct {
	Binary      string
	Kubeconfig  string
	MetricsPort int
	HealthPort  int
}

// AgentSandbox is agent-sandbox's controller (with its extensions:
// templates, warm pools, claims); ready when its /readyz answers.
func AgentSandbox(s AgentSandboxSettings) Spec {
	return Spec{
		Name: "agent-sandbox-controller", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig,
			"--extensions=true",
			// No webhook server locally; the CRDs were applied with conversion None.
			"--enable-webhook=false",
			"--leader-elect=false",
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(s.MetricsPort),
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(s.HealthPort),
		},
		env:   []string{"KUBECONFIG=" + s.Kubeconfig},
		ready: readiness{url: "http://127.0.0.1:" + strconv.Itoa(s.HealthPort) + "/readyz", timeout: 90 * time.Second},
	}
}
