package contract_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/exporter"
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
		{"pools variable", exporter.PoolsEnv, contract.ExporterPoolsEnv},
		{"a pool's path", exporter.DemandPath + "/code", contract.DemandPoolPath("code")},
	} {
		if c.exporter != c.contract {
			t.Errorf("%s: the exporter has %q, the contract %q", c.what, c.exporter, c.contract)
		}
	}

	if exporter.ScrapeDeadline != contract.ExporterScrapeDeadline {
		t.Errorf("scrape deadline: the exporter has %s, the contract %s", exporter.ScrapeDeadline, contract.ExporterScrapeDeadline)
	}
	if exporter.ReuseWindow != contract.ExporterReuseWindow {
		t.Errorf("reuse window: the exporter has %s, the contract %s", exporter.ReuseWindow, contract.ExporterReuseWindow)
	}

	// A pool with arrivals: every field the contract names is in the answer.
	n := int64(1)
	b, err := json.Marshal(exporter.DemandResponse{ArrivalsShort: &n, ArrivalsLong: &n, ArrivalsShortWindowSeconds: &n, ArrivalsLongWindowSeconds: &n})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{contract.DemandField, contract.DemandFreshField, contract.DemandReadAtField, contract.DemandPoolField,
		contract.DemandArrivalsShortField, contract.DemandArrivalsLongField,
		contract.DemandArrivalsShortWindowField, contract.DemandArrivalsLongWindowField} {
		if _, ok := fields[f]; !ok {
			t.Errorf("the exporter's /demand answer has no %q field (it has %v)", f, fields)
		}
	}
}

// The pools the program renders (contract.ExporterPool, encoding/json) are the pools the exporter
// reads, and a pool name of the contract's largest length is accepted.
func TestExporterReadsTheContractsPools(t *testing.T) {
	b, err := json.Marshal([]contract.ExporterPool{
		{Name: "code", Namespace: "agents-code", ArrivalWindowsSeconds: []int{30, 180}},
		{Name: "browser-0123456789-0123456789-0123456789", Namespace: "agents-browser", Selector: "kind=browser"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := exporter.ParsePools(string(b))
	if err != nil {
		t.Fatalf("the exporter refuses the contract's pools %s: %v", b, err)
	}
	want := []exporter.Pool{
		{Name: "code", Namespace: "agents-code", ShortWindow: 30 * time.Second, LongWindow: 180 * time.Second},
		{Name: "browser-0123456789-0123456789-0123456789", Namespace: "agents-browser", Selector: "kind=browser"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the exporter read %s as %+v, want %+v", b, got, want)
	}
}
