package bursts

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The short day's judge on a recorded run (BenchmarkShortLiveDay's, with SHORTDAY_RECORD set):
// on the first run the model agrees and the broken models of the nodes part, but an HPA syncing
// every minute does not; the judge rejects a record the model does not fit, and a model of the
// wrong nodes; and on a second run of the same claims the cluster was three claims warmer, so
// the model parts from it: why the short day is not yet a guard in ./test.
func TestRecordedShortDayHoldsTheModel(t *testing.T) {
	rec, err := ReadLiveDayRecord(filepath.Join("testdata", "shortday-record.json"))
	require.NoError(t, err)
	_, k, err := liveDayNodes()
	require.NoError(t, err)
	require.Len(t, rec.Rows, 1)
	assert.Equal(t, shortDaySetting(k), rec.Rows[0].Setting, "the record is of the setting the live test runs")
	assert.Equal(t, shortDayFamily, rec.Rows[0].Family)
	assert.EqualValues(t, shortDaySeed, rec.Rows[0].Seed)

	// The model agrees with the first run, and the broken models of the nodes part from it; the
	// HPA syncing every minute, replayed on every fourth of the live HPA's syncs, does not: five
	// minutes of this trace cannot tell it from the model.
	problems, notes, err := shortDayVerdict(rec)
	require.NoError(t, err)
	require.Len(t, problems, 1, "%v", problems)
	assert.Contains(t, problems[0], "a model with an HPA that syncs every minute, not every 15s agrees with the record too")
	assert.Len(t, notes, len(brokenLoops(rec)), "what was read, and the two broken models of the nodes parting")

	// The live cluster three claims warmer than it was: the model no longer fits.
	warmer := rec
	warmer.Rows = []RecordedRow{rec.Rows[0]}
	warmer.Rows[0].Live.Warm += 300.0 / float64(len(rec.Rows[0].Claims))
	problems, _, err = shortDayVerdict(warmer)
	require.NoError(t, err)
	require.NotEmpty(t, problems)
	assert.Contains(t, problems[0], "the model parts from the live loop: warm hits")

	// The model given nodes that launch in 10 s: it parts from what the cluster did.
	fast := rec
	fast.LaunchDelay = 10 * time.Second
	problems, _, err = shortDayVerdict(fast)
	require.NoError(t, err)
	require.NotEmpty(t, problems)
	assert.True(t, strings.HasPrefix(problems[0], "the model parts from the live loop"), problems[0])

	second, err := ReadLiveDayRecord(filepath.Join("testdata", "shortday-record-2.json"))
	require.NoError(t, err)
	assert.Equal(t, len(rec.Rows[0].Claims), len(second.Rows[0].Claims), "the same claims")
	problems, _, err = shortDayVerdict(second)
	require.NoError(t, err)
	require.NotEmpty(t, problems)
	assert.Contains(t, problems[0], "the model parts from the live loop: warm hits 97.6% live, 88.1% model (4 claims apart")
}
