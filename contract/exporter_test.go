package contract_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
	"github.com/warmpool/warm-pool-autoscaling-keda/exporter"
)

// TestExporterCopyMatchesTheContract holds the exporter's own copy of the shared names (it ships
// as source and imports nothing of the project) equal to the contract the other parts use.
func TestExporterCopyMatchesTheContract(t *testing.T) {
	for _, c := range []struct{ what, exporter, contract string }{
		{"claims API group", exporter.ClaimsGroup, contract.AgentSandboxExtensionsGroup},
		{"claims API version", exporter.ClaimsVersion, contract.AgentSandboxVersion},
		{"claims resource", exporter.ClaimsResource, contract.SandboxClaimsResource},
		{"demand path", exporter.DemandPath, contract.DemandPath},
		{"listen port", exporter.DefaultListen, ":" + strconv.Itoa(contract.ExporterPort)},
	} {
		if c.exporter != c.contract {
			t.Errorf("%s: the exporter has %q, the contract %q", c.what, c.exporter, c.contract)
		}
	}

	if exporter.ScrapeDeadline != contract.ExporterScrapeDeadline {
		t.Errorf("scrape deadline: the exporter has %s, the contract %s", exporter.ScrapeDeadline, contract.ExporterScrapeDeadline)
	}

	b, err := json.Marshal(exporter.DemandResponse{})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{contract.DemandField, contract.DemandFreshField, contract.DemandReadAtField} {
		if _, ok := fields[f]; !ok {
			t.Errorf("the exporter's /demand answer has no %q field (it has %v)", f, fields)
		}
	}
}
