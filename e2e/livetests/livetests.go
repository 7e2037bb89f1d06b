// Package livetests holds the rule `./test` runs by: a test that starts a local control plane or
// builds an upstream tool is named TestLive.... `./test` runs `-skip '^TestLive'` in its fast
// phase, with PhaseEnv=fast, and `-run '^TestLive'` in the live one. The two doors to the upstream
// tools (localcluster.Start and toolcache.Ensure) call Refuse first, so a test that breaks the
// rule fails in the fast phase, saying what to rename, instead of building every tool there or
// never running in the live phase. The check is made where the tools are reached, by the run
// itself: a reading of the source cannot tell a test that calls a start step from one that only
// lists the steps.
package livetests

import (
	"fmt"
	"os"
)

// Prefix starts the name of every test that needs the upstream tools.
const Prefix = "TestLive"

// PhaseEnv names the phase of ./test a run is in; FastPhase is the one without the tools.
const (
	PhaseEnv  = "WARMPOOL_TEST_PHASE"
	FastPhase = "fast"
)

// Refuse returns an error when this run is ./test's fast phase: whatever called it (to do what,
// e.g. "start a local control plane") belongs to a test that must be named TestLive....
func Refuse(what string) error {
	if os.Getenv(PhaseEnv) != FastPhase {
		return nil
	}
	return fmt.Errorf("a test tried to %s in ./test's fast phase (%s=%s): a test that starts a control plane or builds an upstream tool must be named %s... so that ./test runs it in the live phase", what, PhaseEnv, FastPhase, Prefix)
}
