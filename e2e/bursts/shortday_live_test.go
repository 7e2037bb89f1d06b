package bursts

import (
	"context"
	"os"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster"
	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

// The short live day: the live day (BenchmarkLiveDay) cut to one setting and five minutes, a
// guard in ./test that the model and the live loop still agree (shortDayVerdict, docs/bursts.md):
// the model's replay of the claims the harness created, on the HPA's syncs the tap recorded, must
// agree with what the cluster counted, and each model broken on purpose must part from it.
// SHORTDAY_RECORD=path also writes the run's record (TestRecordedShortDayHoldsTheModel reads the
// committed ones).
func TestLiveShortDayHoldsTheModel(t *testing.T) {
	if os.Getenv(localcluster.SkipEnv) == "1" {
		t.Skipf("%s=1: not starting the local control plane (this test proves nothing when skipped)", localcluster.SkipEnv)
	}
	itype, k, err := liveDayNodes()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := familyTrace(shortDayFamily, shortDaySeed, shortDayCut)
	if err != nil {
		t.Fatal(err)
	}
	s := shortDaySetting(k)
	p, err := liveDayPolicy(s, "short")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.ModelPolicy()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", s.What, tr.Summary())
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	run := &liveDayRun{family: shortDayFamily, seed: shortDaySeed, trace: tr, settings: []LiveSetting{s}, policies: []Policy{p}, models: []replay.Policy{m}}
	rec := runLiveDay(t, ctx, t.TempDir(), "", itype, k, []*liveDayRun{run})
	if path := os.Getenv("SHORTDAY_RECORD"); path != "" {
		if err := WriteLiveDayRecord(path, rec); err != nil {
			t.Error(err)
		}
	}
	problems, notes, err := shortDayVerdict(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		t.Log(n)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
