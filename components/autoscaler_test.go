package components

import (
	"testing"

	"github.com/warmpool/warm-pool-autoscaling-keda/exporter"
)

// The exporter keeps its own copy of the scrape deadline (it ships as source);
// the ScaledObject's trigger timeout is derived from the program's copy. The
// copies must agree, and KEDA must wait longer than the exporter takes.
func TestTriggerTimeoutOutlastsTheExporterScrapeDeadline(t *testing.T) {
	if exporter.ScrapeDeadline != ExporterScrapeDeadline {
		t.Errorf("exporter.ScrapeDeadline = %s but components.ExporterScrapeDeadline = %s; change both together",
			exporter.ScrapeDeadline, ExporterScrapeDeadline)
	}
	if TriggerTimeout <= exporter.ScrapeDeadline {
		t.Errorf("TriggerTimeout %s does not outlast the exporter's scrape deadline %s: KEDA would give up before the stale count arrives",
			TriggerTimeout, exporter.ScrapeDeadline)
	}
}
