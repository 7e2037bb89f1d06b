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
// on the first run the model agrees and every broken model parts; the judge rejects a record the
// model does not fit, and a model of the wrong nodes; and on a second run of the same claims the
// cluster was three claims warmer, so the model parts from it and the model without a launch
// delay fits it: why the short day is not yet a guard in ./test.
func TestRecordedShortDayHoldsTheModel(t *testing.T) {
	rec, err := ReadLiveDayRecord(filepath.Join("testdata", "shortday-record.json"))
	require.NoError(t, err)
	_, k, err := liveDayNodes()
	require.NoError(t, err)
	require.Len(t, rec.Rows, 1)
	assert.Equal(t, shortDaySetting(k), rec.Rows[0].Setting, "the record is of the setting the live test runs")
	assert.Equal(t, shortDayFamily, rec.Rows[0].Family)
	assert.EqualValues(t, shortDaySeed, rec.Rows[0].Seed)

	problems, notes, err := shortDayVerdict(rec)
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Len(t, notes, 1+len(brokenLoops(rec)), "what was read, and each broken model parting")

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
	require.Len(t, problems, 2, "%v", problems)
	assert.Contains(t, problems[0], "the model parts from the live loop: warm hits 97.6% live, 90.5% model (3 claims apart")
	assert.Contains(t, problems[1], "a model with no node launch delay (a node Ready at once) agrees with the record too")
}
