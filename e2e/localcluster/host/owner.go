package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"
)

// CleanPreviousOwner undoes what a control plane with real nodes that is no
// longer running left on the machine (it was killed before its teardown).
func CleanPreviousOwner(say func(string, ...any)) error {
	owner, err := readOwner()
	if err != nil || owner == "" {
		return nil
	}
	if procs, _ := process.Load(owner); procs != nil && procs.AnyAlive() {
		return fmt.Errorf("a local control plane with real nodes is running in %s (real nodes use fixed addresses: one at a time); stop it first: localcluster down --state %s", owner, owner)
	}
	say("removing what the real nodes of a stopped control plane left (state %s)", owner)
	if err := Clean(owner, ""); err != nil {
		return fmt.Errorf("cleaning up after the control plane in %s: %w", owner, err)
	}
	return ReleaseOwner(owner)
}

func ownerPath() (string, error) {
	cache, err := toolcache.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, realNodeOwnerFile), nil
}

func readOwner() (string, error) {
	p, err := ownerPath()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func ClaimRealNodes(stateDir string) error {
	p, err := ownerPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(stateDir+"\n"), 0o644)
}

// ReleaseOwner forgets the owner if it is stateDir.
func ReleaseOwner(stateDir string) error {
	if owner, _ := readOwner(); owner == stateDir {
		p, err := ownerPath()
		if err != nil {
			return err
		}
		return os.Remove(p)
	}
	return nil
}

// realNodeOwnerFile (in the cache directory) names the state directory of the
// control plane that last set up real nodes: their addresses are fixed, so
// only one runs at a time, and a start finds there what a killed one left.
const realNodeOwnerFile = "real-nodes-owner"
