package framework

import (
	"strings"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// The evidence verify printed for the code pool on the live run of 2026-12-04 (shortened to the
// parts the check reads).
const liveScheduledEvidence = `the arrivals formula "float(2 * ceil((claims + max((max(arrivals_short * 0.6, arrivals_long * 0.2) > 0 ? ceil(...) : 0) + 0, schedule_0)) / 2) - claims)" over triggers ..., schedule windows schedule_0 = 3 warm from "9 18 * * *" to "9 22 * * *" in UTC, in force now (3), compiled as KEDA compiles it`

// The two-pools run's guard accepts the live evidence and rejects each thing it stands for
// missing: the window not in force, no rounding, another pool, a check that did not pass.
func TestScheduledFormulaCheckReadsTheScheduleAndTheRounding(t *testing.T) {
	pass := report.Check{Pool: "code", Status: report.Pass, Name: "formula", Evidence: liveScheduledEvidence}
	rep := &report.Report{Checks: []report.Check{{Pool: "code", Status: report.Pass, Evidence: "unrelated"}, pass}}
	if c, err := ScheduledFormulaCheck(rep, "code"); err != nil || c.Evidence != liveScheduledEvidence {
		t.Fatalf("the live evidence: %v, %v", c, err)
	}
	for name, c := range map[string]report.Check{
		"window not in force": {Pool: "code", Status: report.Pass, Evidence: strings.Replace(liveScheduledEvidence, "in force now (3)", "not in force now (0)", 1)},
		"no rounding":         {Pool: "code", Status: report.Pass, Evidence: strings.Replace(liveScheduledEvidence, "2 * ceil((claims + ", "(", 1)},
		"another pool":        {Pool: "browser", Status: report.Pass, Evidence: liveScheduledEvidence},
		"not passed":          {Pool: "code", Status: report.Fail, Evidence: liveScheduledEvidence},
	} {
		if got, err := ScheduledFormulaCheck(&report.Report{Checks: []report.Check{c}}, "code"); err == nil {
			t.Errorf("%s: accepted %+v", name, got)
		}
	}
}
