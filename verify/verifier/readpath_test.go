package verifier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

// goneOnceClaimed is an exporter that answers until the run's first claim exists, and is then
// unreachable: the read path breaks after the precondition read it whole.
type goneOnceClaimed struct{ fakeDemand }

func (g goneOnceClaimed) Read(ctx context.Context) (DemandReading, error) {
	if len(g.c.claimNames(testNS)) > 0 {
		return DemandReading{}, errors.New(`GET .../services/claim-exporter:8080/proxy/demand: 503 no endpoints available for service "claim-exporter"`)
	}
	return g.fakeDemand.Read(ctx)
}

// With every exporter replica gone, KEDA's status still reads Happy for tens of seconds: the
// precondition holds it to the Service's endpoints and FAILs naming the broken part.
func TestKEDAsLaggingStatusIsHeldToTheReadPath(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	c.exporterEndpoints = 0
	c.start()
	cfg := testConfig()
	cfg.Phase = "demand"
	cfg.StepTimeout = 1500 * time.Millisecond
	cfg.ExporterTimeout = 300 * time.Millisecond
	_, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	checks := rep.Find("KEDA reads the exporter")
	if len(checks) != 1 || checks[0].Status != report.Fail ||
		!strings.Contains(checks[0].Evidence, "Fallback=False") ||
		!strings.Contains(checks[0].Evidence, "the read path is broken at the exporter's Service "+testNS+"/claim-exporter (no ready endpoint") {
		t.Fatalf("KEDA Happy with no exporter endpoint: %+v; want FAIL naming the Service\n%s", checks, out)
	}

	// The same status with two ready endpoints passes, and says what it read.
	c = newCluster(t)
	c.start()
	_, rep, out = runWith(t, context.Background(), c, cfg, blueprintExec(), fakeDemand{c: c})
	if checks := rep.Find("KEDA reads the exporter"); len(checks) != 1 || checks[0].Status != report.Pass ||
		!strings.Contains(checks[0].Evidence, "the read path reads whole") || !strings.Contains(checks[0].Evidence, "2 ready endpoint(s)") {
		t.Fatalf("a whole read path: %+v\n%s", checks, out)
	}
}

// A scale step that fails says whether the read path is broken, and where; or that it reads
// whole, so the failure is after it.
func TestAFailedStepNamesTheReadPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, says string
		demand     func(c *cluster) DemandReader
	}{
		{"the exporter gone during the run", "the read path is broken at the exporter (a read of the count failed: GET",
			func(c *cluster) DemandReader { return goneOnceClaimed{fakeDemand{c: c}} }},
		{"the HPA not following a readable count", "the read path reads whole",
			func(c *cluster) DemandReader { return fakeDemand{c: c} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has a fake cluster of its own; they wait in wall time
			c := newCluster(t)
			c.keda.Store(false)
			c.start()
			cfg := testConfig()
			cfg.Phase = "demand"
			cfg.StepTimeout = 1500 * time.Millisecond
			_, rep, out := runWith(t, context.Background(), c, cfg, blueprintExec(), tc.demand(c))
			var failed *report.Check
			for _, ch := range rep.Find("scale up:") {
				if ch.Status == report.Fail {
					failed = &ch
					break
				}
			}
			if failed == nil || !strings.Contains(failed.Evidence, tc.says) {
				t.Fatalf("the failed scale step: %+v; want its evidence to say %q\n%s", failed, tc.says, out)
			}
		})
	}
}
