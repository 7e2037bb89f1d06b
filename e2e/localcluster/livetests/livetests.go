// Package livetests holds the rules `./test` runs by: a test that starts a local control plane or
// builds an upstream tool is named TestLive..., and one that starts real nodes TestLiveRealNode....
// `./test` runs `-skip '^TestLive'` in its fast phase, with PhaseEnv=fast, then two lanes at once:
// `-run '^TestLiveRealNode'` (one at a time) and the other TestLive tests with
// PhaseEnv=live-simulated. The two doors to the upstream tools (localcluster.Start and
// toolcache.Ensure) call Refuse first, and Start calls RefuseRealNodes before it starts real
// nodes, so a test that breaks a rule fails, saying what to rename, instead of building every
// tool in the fast phase, never running in the live phase, or meeting another run's real node.
// The check is made where the tools are reached, by the run itself: a reading of the source
// cannot tell a test that calls a start step from one that only lists the steps.
package livetests

import (
	"fmt"
	"os"
)

// Prefix starts the name of every test that needs the upstream tools.
const Prefix = "TestLive"

// RealNodePrefix starts the name of every live test that starts real nodes. Real nodes use the
// machine's fixed addresses and bridge, so one control plane with real nodes runs at a time;
// ./test runs these one after another in one lane, beside the lane of the others (simulated
// nodes, loopback and free ports only).
const RealNodePrefix = Prefix + "RealNode"

// PhaseEnv names the phase of ./test a run is in; FastPhase is the one without the tools, and
// SimulatedLane the live lane that runs beside the real-node tests.
const (
	PhaseEnv      = "WARMPOOL_TEST_PHASE"
	FastPhase     = "fast"
	SimulatedLane = "live-simulated"
)

// Refuse returns an error when this run is ./test's fast phase: whatever called it (to do what,
// e.g. "start a local control plane") belongs to a test that must be named TestLive....
func Refuse(what string) error {
	if os.Getenv(PhaseEnv) != FastPhase {
		return nil
	}
	return fmt.Errorf("a test tried to %s in ./test's fast phase (%s=%s): a test that starts a control plane or builds an upstream tool must be named %s... so that ./test runs it in the live phase", what, PhaseEnv, FastPhase, Prefix)
}

// RefuseRealNodes returns an error when this run is ./test's simulated-node lane: real nodes use
// the machine's fixed addresses, so they run in the real-node lane, one test at a time, and the
// simulated-node lane runs several packages' control planes without that rule.
func RefuseRealNodes() error {
	if os.Getenv(PhaseEnv) != SimulatedLane {
		return nil
	}
	return fmt.Errorf("a test tried to start real nodes in ./test's simulated-node lane (%s=%s), which runs no real node: a test that starts real nodes must be named %s... so that ./test runs it in the real-node lane, one at a time", PhaseEnv, SimulatedLane, RealNodePrefix)
}
