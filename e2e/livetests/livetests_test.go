package livetests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the directory holding go.mod, above this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// The repository keeps the rule: every test that starts a control plane or builds an upstream
// tool is named TestLive..., and only those.
func TestEveryLiveTestIsNamedSo(t *testing.T) {
	tests, err := Find(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, tc := range tests {
		if why := tc.Misnamed(); why != "" {
			t.Error(why)
		}
		if tc.Starts {
			live = append(live, tc.Dir+"/"+tc.Name)
		}
	}
	// The known live tests are found: a reading that found none would prove nothing.
	for _, want := range []string{"e2e/TestLiveEndToEnd", "e2e/localcluster/TestLiveControlPlane", "e2e/localcluster/TestLiveRealNode", "e2e/localcluster/TestLiveBuiltCoreDNSRunsTheGeneratedCorefile"} {
		if !contains(live, want) {
			t.Errorf("%s was not found to start a control plane or build a tool; found %v", want, live)
		}
	}
	t.Logf("%d tests, live: %v", len(tests), live)
}

// A test that reaches a starter through helpers of its package, by a call or a method value, is
// live; one that only calls a method named Start on something else is not.
func TestFindFollowsHelpersAndMethodValues(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/a_test.go", `package a

import (
	"testing"

	"example.com/e2e/framework"
)

type env struct{}

func startIt() { framework.StartCluster(nil, nil) }
func newEnv() *env { startIt(); return &env{} }
func (e *env) faults(t *testing.T) {}
func run(f func(*testing.T)) {}

func TestLiveThroughHelpers(t *testing.T) { e := newEnv(); run(e.faults) }
func TestThroughAMethodValue(t *testing.T) { run(newEnv().faults) }
func TestPure(t *testing.T) { var p proc; p.Start() }
func TestLiveButPure(t *testing.T) {}

type proc struct{}

func (proc) Start() {}
`)
	write(t, root, "localcluster/l_test.go", `package localcluster

import "testing"

func Start() {}
func helper() { Start() }

func TestLiveCallsItsOwnStart(t *testing.T) { helper() }
func TestCallsAStartMethod(t *testing.T) { var x struct{ Start func() }; x.Start() }
`)
	tests, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tc := range tests {
		got[tc.Dir+"/"+tc.Name] = tc.Misnamed()
	}
	want := map[string]string{
		"a/TestLiveThroughHelpers":              "",
		"a/TestThroughAMethodValue":             "starts a control plane",
		"a/TestPure":                            "",
		"a/TestLiveButPure":                     "starts no control plane",
		"localcluster/TestLiveCallsItsOwnStart": "",
		"localcluster/TestCallsAStartMethod":    "",
	}
	if len(got) != len(want) {
		t.Errorf("found %v, want the %d tests %v", got, len(want), want)
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s not found", name)
		case w == "" && g != "":
			t.Errorf("%s: %q, want it to keep the rule", name, g)
		case w != "" && !strings.Contains(g, w):
			t.Errorf("%s: %q, want a message containing %q", name, g, w)
		}
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
