package procspec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// KWOKSettings are what KWOK's command line depends on.
type KWOKSettings struct {
	Binary     string
	Kubeconfig string
	Port       int
	// StagesFile is the stages KWOK runs pods and nodes by (KWOKStagesFile).
	StagesFile string
}

// KWOK is KWOK, which plays the kubelets of the simulated nodes.
func KWOK(s KWOKSettings) Spec {
	return Spec{
		Name: "kwok", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			// Without leases the node lifecycle controller marks nodes NotReady after ~50s.
			"--node-lease-duration-seconds=40",
			"--cidr=" + host.KWOKPodCIDR,
			"--node-ip=127.0.0.1",
			"--server-address=127.0.0.1:" + strconv.Itoa(s.Port),
			"--config=" + s.StagesFile,
		},
	}
}

// KWOKStagesFile is the default stages file (in KWOK's run-time data), or
// the one edit made of it, written into stateDir.
func KWOKStagesFile(dataDir, stateDir string, edit func([]byte) ([]byte, error)) (string, error) {
	defaults := filepath.Join(dataDir, "kwok-stages.yaml")
	if edit == nil {
		return defaults, nil
	}
	b, err := os.ReadFile(defaults)
	if err != nil {
		return "", err
	}
	edited, err := edit(b)
	if err != nil {
		return "", fmt.Errorf("Options.KwokStages: %w", err)
	}
	path := filepath.Join(stateDir, "kwok-stages.yaml")
	return path, os.WriteFile(path, edited, 0o644)
}
