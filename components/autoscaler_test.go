package components

import (
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// KEDA must wait longer than the exporter takes to answer, or a slow API reaches KEDA as a
// timeout instead of the exporter's stale count. (contract/exporter_test.go holds the exporter's
// own copy of the deadline equal to the contract's.)
func TestTriggerTimeoutOutlastsTheExporterScrapeDeadline(t *testing.T) {
	if TriggerTimeout <= contract.ExporterScrapeDeadline {
		t.Errorf("TriggerTimeout %s does not outlast the exporter's scrape deadline %s: KEDA would give up before the stale count arrives",
			TriggerTimeout, contract.ExporterScrapeDeadline)
	}
}
