package bursts

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tap forwards every read to the exporter, unchanged, and records the counts of those that
// served one, timed from the day's start; an error answer is forwarded and not taken as a read.
func TestDemandTapRecordsWhatTheExporterServed(t *testing.T) {
	answers := []struct {
		code int
		body string
	}{
		{http.StatusOK, `{"active_claims": 3, "arrivals_short": 2, "arrivals_long": 5, "fresh": true}`},
		{http.StatusServiceUnavailable, `{"error": "no count yet"}`},
		{http.StatusOK, `{"active_claims": 4, "fresh": true}`},
	}
	served := 0
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/demand", r.URL.Path)
		a := answers[served]
		served++
		w.WriteHeader(a.code)
		_, _ = io.WriteString(w, a.body)
	}))
	defer exp.Close()
	tap, err := StartDemandTap(exp.URL + "/demand")
	require.NoError(t, err)
	defer tap.Close()
	start := time.Now()
	for _, a := range answers {
		resp, err := http.Get(tap.URL)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, a.code, resp.StatusCode)
		assert.Equal(t, a.body, string(body), "KEDA gets the exporter's answer as it was")
	}
	reads := tap.Reads(start, time.Now())
	require.Len(t, reads, 2, "two counts served; the 503 is no read")
	assert.Equal(t, DemandRead{At: reads[0].At, Held: 3, Short: 2, Long: 5}, reads[0])
	assert.Equal(t, DemandRead{At: reads[1].At, Held: 4}, reads[1])
	assert.True(t, reads[0].At >= 0 && reads[0].At <= reads[1].At, "timed from the start, in order: %v", reads)
	assert.Empty(t, tap.Reads(time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)), "none outside the window")
}
