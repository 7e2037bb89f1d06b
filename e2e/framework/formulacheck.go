package framework

import (
	"fmt"
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// ScheduledFormulaCheck is the passing check of pool whose evidence reads the arrivals formula
// with the two-pools stack's schedule window in force (3 warm) and the rounding to 2 per node:
// verify held the pool to that formula, not to the one without them.
func ScheduledFormulaCheck(rep *report.Report, pool string) (*report.Check, error) {
	for i, c := range rep.Checks {
		if c.Pool == pool && c.Status == report.Pass && strings.Contains(c.Evidence, "schedule_0 = 3 warm") &&
			strings.Contains(c.Evidence, "in force now (3)") && strings.Contains(c.Evidence, "2 * ceil((claims + ") {
			return &rep.Checks[i], nil
		}
	}
	return nil, fmt.Errorf("no passing check of pool %s read the formula with schedule_0 in force (3 warm) and rounding to 2 per node, among %d checks", pool, len(rep.Checks))
}
