package procspec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// testInstanceTypes are two of the add-on's default instance types.
var testInstanceTypes = []InstanceType{
	{Name: "c6a.large", CPU: "2", Memory: "4Gi", PricePerHour: 0.0765},
	{Name: "m6a.xlarge", CPU: "4", Memory: "16Gi", PricePerHour: 0.1728},
}

func testKarpenterSettings() KarpenterSettings {
	return KarpenterSettings{
		Binary: "/tools/karpenter", Kubeconfig: "/state/kubeconfig", MetricsPort: 11, HealthPort: 12,
		InstanceTypesFile: "/state/karpenter/instance-types.json", InstanceTypes: testInstanceTypes,
	}
}

// Karpenter reads its kubeconfig from the environment (its flag set has no
// --kubeconfig: an unknown flag panics), runs alone without leader election,
// serves health and metrics on the chosen ports, is ready by /readyz, and
// reads the instance types it writes.
func TestKarpenterSpec(t *testing.T) {
	s := testKarpenterSettings()
	g := Karpenter(s)
	f := flagMap(t, g.args)
	if g.Name != "karpenter" || g.binary != s.Binary || !slices.Contains(g.env, "KUBECONFIG=/state/kubeconfig") {
		t.Errorf("%s (%s) env %v", g.Name, g.binary, g.env)
	}
	if _, ok := f["--kubeconfig"]; ok {
		t.Errorf("--kubeconfig is not a flag of Karpenter's: it would panic at start (%v)", g.args)
	}
	if f["--disable-leader-election"] != "true" || f["--metrics-port"] != "11" || f["--health-probe-port"] != "12" {
		t.Errorf("flags %v", f)
	}
	if g.ready.url != "http://127.0.0.1:12/readyz" {
		t.Errorf("ready by %q, want /readyz on the health port", g.ready.url)
	}
	if f["--instance-types-file-path"] != s.InstanceTypesFile {
		t.Fatalf("--instance-types-file-path=%q, want %s", f["--instance-types-file-path"], s.InstanceTypesFile)
	}
	for _, unset := range []string{"--batch-idle-duration", "--batch-max-duration"} {
		if _, ok := f[unset]; ok {
			t.Errorf("%s set without a setting: Karpenter's default is the one to keep", unset)
		}
	}
	s.BatchIdle, s.BatchMax = 2*time.Second, 20*time.Second
	g2 := Karpenter(s)
	if f2 := flagMap(t, g2.args); f2["--batch-idle-duration"] != "2s" || f2["--batch-max-duration"] != "20s" {
		t.Errorf("batch window flags %v", f2)
	}
	if slices.ContainsFunc(g.env, func(e string) bool { return strings.HasPrefix(e, "LOG_LEVEL=") }) {
		t.Errorf("env %v sets a log level without Debug", g.env)
	}
	s.Debug = true
	if g3 := Karpenter(s); !slices.Contains(g3.env, "LOG_LEVEL=debug") {
		t.Errorf("Debug: env %v, want LOG_LEVEL=debug", g3.env)
	}
	s.Debug = false

	// The file as the KWOK provider decodes it (InstanceTypeOptions,
	// KWOKOffering: Go field names, matched without regard to case).
	var types []struct {
		Name             string
		Architecture     string
		OperatingSystems []string
		Resources        map[string]string
		Offerings        []struct {
			Price        float64
			Available    bool
			Requirements []struct {
				Key, Operator string
				Values        []string
			}
		}
	}
	if err := json.Unmarshal([]byte(fileData(t, g, s.InstanceTypesFile)), &types); err != nil {
		t.Fatal(err)
	}
	if len(types) != len(testInstanceTypes) {
		t.Fatalf("%d instance types written, want %d", len(types), len(testInstanceTypes))
	}
	for i, it := range types {
		want := testInstanceTypes[i]
		if it.Name != want.Name || it.Architecture != "amd64" || !slices.Equal(it.OperatingSystems, []string{"linux"}) ||
			it.Resources["cpu"] != want.CPU || it.Resources["memory"] != want.Memory {
			t.Errorf("instance type %d: %+v, want %+v on linux/amd64", i, it, want)
		}
		if len(it.Offerings) != 1 || it.Offerings[0].Price != want.PricePerHour || !it.Offerings[0].Available {
			t.Errorf("%s: offerings %+v, want one at %v", it.Name, it.Offerings, want.PricePerHour)
			continue
		}
		reqs := map[string]string{}
		for _, r := range it.Offerings[0].Requirements {
			if r.Operator == "In" && len(r.Values) == 1 {
				reqs[r.Key] = r.Values[0]
			}
		}
		// Without a zone an offering is offered nowhere: Karpenter launches nothing.
		if reqs["topology.kubernetes.io/zone"] != karpenterZone || reqs["karpenter.sh/capacity-type"] != "on-demand" {
			t.Errorf("%s: offering requirements %v, want its zone and on-demand", it.Name, reqs)
		}
	}
}
