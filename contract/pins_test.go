package contract_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// TestPinsThatDifferSayWhy fails when the program and the local control plane pin different
// versions of the same thing (or only one of them pins it) and the entry gives no reason.
func TestPinsThatDifferSayWhy(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range contract.Pins {
		if seen[p.Name] {
			t.Errorf("pin %q is listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Program == "" && p.LocalControlPlane == "" {
			t.Errorf("pin %q pins nothing", p.Name)
		}
		if !contract.SameVersion(p.Program, p.LocalControlPlane) && p.Why == "" {
			t.Errorf("pin %q: the program has %q and the local control plane %q, and nothing says why; "+
				"align them or state the reason in contract.Pins", p.Name, p.Program, p.LocalControlPlane)
		}
	}
}

// TestPinsMatchTheModulesThatBuildThem reads the go.mod files: the root module's (the program's
// SDKs) and each local tool's, so a bumped go.mod without a bumped pin (or the reverse) fails.
func TestPinsMatchTheModulesThatBuildThem(t *testing.T) {
	checked := 0
	for _, p := range contract.Pins {
		if p.ProgramModule != "" {
			checkRequire(t, p.Name, filepath.Join("..", "go.mod"), p.ProgramModule, p.Program)
			checked++
		}
		if p.LocalModule != "" {
			checkRequire(t, p.Name, filepath.Join("..", "e2e", "localcluster", "toolcache", "tools", p.LocalToolDir, "go.mod"), p.LocalModule, p.LocalControlPlane)
			checked++
		}
	}
	if checked < 7 {
		t.Errorf("only %d go.mod requirements checked; the pins lost their modules", checked)
	}
}

func checkRequire(t *testing.T, pin, gomod, module, want string) {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Errorf("pin %q: %v", pin, err)
		return
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Errorf("pin %q: %s does not require %s", pin, gomod, module)
		return
	}
	if got := string(m[1]); !contract.SameVersion(got, want) {
		t.Errorf("pin %q: %s requires %s %s, but contract.Pins says %s; change both together", pin, gomod, module, got, want)
	}
}

func TestSameVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"2.21.0", "v2.21.0", true}, {"1.36", "v1.36.3", true}, {"v1.0.10", "v0.5.6", false},
		{"1.3", "v1.36.3", false}, {"", "v1.0.0", false}, {"img:1.36", "img:1.36.1", false}, {"img:1.36.1", "img:1.36.1", true}, {"a", "a", true},
	} {
		if got := contract.SameVersion(c.a, c.b); got != c.same {
			t.Errorf("SameVersion(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
