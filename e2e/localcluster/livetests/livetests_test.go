package livetests

import (
	"strings"
	"testing"
)

func TestRefuseOnlyInTheFastPhaseNamingTheRule(t *testing.T) {
	t.Setenv(PhaseEnv, FastPhase)
	err := Refuse("start a local control plane")
	if err == nil || !strings.Contains(err.Error(), "start a local control plane") || !strings.Contains(err.Error(), Prefix) {
		t.Errorf("in the fast phase: %v, want an error naming what was tried and the %s prefix", err, Prefix)
	}
	for _, phase := range []string{"", "live"} {
		t.Setenv(PhaseEnv, phase)
		if err := Refuse("start a local control plane"); err != nil {
			t.Errorf("%s=%q: %v, want nil", PhaseEnv, phase, err)
		}
	}
}

func TestRefuseRealNodesOnlyInTheSimulatedLaneNamingTheRule(t *testing.T) {
	t.Setenv(PhaseEnv, SimulatedLane)
	err := RefuseRealNodes()
	if err == nil || !strings.Contains(err.Error(), RealNodePrefix) {
		t.Errorf("in the simulated-node lane: %v, want an error naming the %s prefix", err, RealNodePrefix)
	}
	for _, phase := range []string{"", "live", FastPhase} {
		t.Setenv(PhaseEnv, phase)
		if err := RefuseRealNodes(); err != nil {
			t.Errorf("%s=%q: %v, want nil", PhaseEnv, phase, err)
		}
	}
}
