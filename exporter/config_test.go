package exporter

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// In a pod: the URL from the service variables (IPv6 bracketed), the token
// and CA at the mount paths, the namespace from the file beside the token.
func TestConfigInClusterDefaults(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	os.WriteFile(filepath.Join(dir, "namespace"), []byte("warm-pool-autoscaling-keda\n"), 0o600)
	cfg, err := LoadConfig([]string{"--token-file", token}, envOf(map[string]string{
		"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{APIURL: "https://[fd00::1]:443", TokenFile: token, CAFile: DefaultCAFile,
		Pools: []Pool{{Namespace: "warm-pool-autoscaling-keda"}}, Listen: ":8080", ReadTimeout: DefaultReadTimeout}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config = %+v\nwant     %+v", cfg, want)
	}
}

// Environment variables override the defaults and flags override both.
func TestConfigFlagBeatsEnvBeatsDefault(t *testing.T) {
	env := envOf(map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443",
		"EXPORTER_API_URL": "https://env:6443", "EXPORTER_TOKEN_FILE": "/env/token", "EXPORTER_CA_FILE": "/env/ca",
		"EXPORTER_NAMESPACE": "env-ns", "EXPORTER_SELECTOR": "env=1", "EXPORTER_LISTEN": ":9", "EXPORTER_READ_TIMEOUT": "2s",
	})
	cfg, err := LoadConfig(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{APIURL: "https://env:6443", TokenFile: "/env/token", CAFile: "/env/ca",
		Pools: []Pool{{Namespace: "env-ns", Selector: "env=1"}}, Listen: ":9", ReadTimeout: 2 * time.Second}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("env config = %+v\nwant         %+v", cfg, want)
	}
	cfg, err = LoadConfig([]string{"--api-url", "http://flag:8001", "--token-file", "/flag/token", "--ca-file", "",
		"--namespace", "flag-ns", "--selector", "flag=1", "--listen", "127.0.0.1:0", "--read-timeout", "1s"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want = Config{APIURL: "http://flag:8001", TokenFile: "/flag/token", CAFile: "",
		Pools: []Pool{{Namespace: "flag-ns", Selector: "flag=1"}}, Listen: "127.0.0.1:0", ReadTimeout: time.Second}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("flag config = %+v\nwant          %+v", cfg, want)
	}
}

func TestConfigRejects(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]string{
		"no API URL":         {"--namespace", "ns"},
		"no namespace":       {"--api-url", "https://x", "--token-file", filepath.Join(dir, "token")},
		"zero timeout":       {"--api-url", "https://x", "--namespace", "ns", "--read-timeout", "0s"},
		"stray argument":     {"--api-url", "https://x", "--namespace", "ns", "extra"},
		"unknown flag":       {"--bogus"},
		"unparsable timeout": {"--read-timeout", "soon"},
	}
	for name, args := range cases {
		if _, err := LoadConfig(args, envOf(nil), io.Discard); err == nil {
			t.Errorf("%s: accepted %q", name, args)
		}
	}
	if _, err := LoadConfig(nil, envOf(map[string]string{"EXPORTER_READ_TIMEOUT": "x"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "EXPORTER_READ_TIMEOUT") {
		t.Errorf("bad EXPORTER_READ_TIMEOUT: err %v", err)
	}
}

// EXPORTER_POOLS as the contract shows it, optional keys left out, and two pools
// that share a namespace with selectors telling them apart.
func TestPoolsAccept(t *testing.T) {
	pools, err := ParsePools(`[
		{"name": "code", "namespace": "agents-code", "selector": "", "arrivalWindowsSeconds": [30, 180]},
		{"name": "browser", "namespace": "agents", "selector": "kind=browser"},
		{"name": "b2", "namespace": "agents", "selector": "kind=b2", "arrivalWindowsSeconds": []},
		{"name": "a-0123456789-0123456789-0123456789-01234", "namespace": "x", "arrivalWindowsSeconds": [1, 3600]}
	]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pool{
		{Name: "code", Namespace: "agents-code", ShortWindow: 30 * time.Second, LongWindow: 180 * time.Second},
		{Name: "browser", Namespace: "agents", Selector: "kind=browser"},
		{Name: "b2", Namespace: "agents", Selector: "kind=b2"},
		{Name: "a-0123456789-0123456789-0123456789-01234", Namespace: "x", ShortWindow: time.Second, LongWindow: time.Hour},
	}
	if !reflect.DeepEqual(pools, want) {
		t.Errorf("pools = %+v\nwant    %+v", pools, want)
	}
}

// Each broken rule is refused at start with what is wrong and how to fix it.
func TestPoolsReject(t *testing.T) {
	ok := `{"name": "code", "namespace": "agents-code"}`
	cases := map[string]struct {
		json string
		says []string
	}{
		"not JSON":          {`code`, []string{"not a JSON array of pools", `"arrivalWindowsSeconds": [30, 180]`}},
		"an object":         {ok, []string{"not a JSON array of pools"}},
		"trailing data":     {`[` + ok + `] []`, []string{"more after its JSON array"}},
		"no pool":           {`[]`, []string{"lists no pool", "unset it"}},
		"null":              {`null`, []string{"lists no pool"}},
		"misspelt key":      {`[{"name": "code", "namespace": "n", "arrivalWindowSeconds": [30, 180]}]`, []string{`unknown field "arrivalWindowSeconds"`}},
		"no name":           {`[{"namespace": "n"}]`, []string{`pool 1 (name ""): "name" is missing`}},
		"upper-case name":   {`[{"name": "Code", "namespace": "n"}]`, []string{"not a DNS label of at most 40", `e.g. "code"`}},
		"name of 41":        {`[{"name": "a-0123456789-0123456789-0123456789-012345", "namespace": "n"}]`, []string{"not a DNS label of at most 40"}},
		"name with a slash": {`[{"name": "a/b", "namespace": "n"}]`, []string{"not a DNS label", `e.g. "a-b"`}},
		"duplicate name":    {`[` + ok + `, {"name": "code", "namespace": "other"}]`, []string{`pool 2 (name "code"): the name is used by pool 1 too`, `pool 1 (name "code"): the name is used by pool 2 too`}},
		"no namespace":      {`[{"name": "code"}]`, []string{`"namespace" is missing`}},
		"bad namespace":     {`[{"name": "code", "namespace": "Agents_Code"}]`, []string{`namespace "Agents_Code" is not a Kubernetes namespace name`}},
		"shared namespace, no selector": {`[{"name": "a", "namespace": "n"}, {"name": "b", "namespace": "n", "selector": "k=v"}]`,
			[]string{`pool 2 (name "b"): shares namespace "n" with pool 1 (name "a")`, "own namespace", "selector"}},
		"shared namespace and selector": {`[{"name": "a", "namespace": "n", "selector": "k=v"}, {"name": "b", "namespace": "n", "selector": "k=v"}]`,
			[]string{`same namespace "n" and selector "k=v" as pool 1`}},
		"selector with spaces around": {`[{"name": "a", "namespace": "n", "selector": " k=v"}]`, []string{"surrounding or control whitespace"}},
		"one window":                  {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [30]}]`, []string{"has 1 value(s)", "[short, long]"}},
		"three windows":               {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [30, 60, 180]}]`, []string{"has 3 value(s)"}},
		"fractional window":           {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [30.5, 180]}]`, []string{"30.5 is not a whole number of seconds"}},
		"zero short window":           {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [0, 180]}]`, []string{"short window 0 is below 1 s"}},
		"long before short":           {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [180, 30]}]`, []string{"[180, 30]: the long window must be longer", "short first"}},
		"equal windows":               {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [60, 60]}]`, []string{"must be longer"}},
		"long window above an hour":   {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": [30, 3601]}]`, []string{"3601 s is above 3600 s"}},
		"window not a number":         {`[{"name": "a", "namespace": "n", "arrivalWindowsSeconds": ["soon", 30]}]`, []string{`pool 1 (name "a"): is not an object of`}},
		"an entry not an object":      {`[` + ok + `, 7]`, []string{`pool 2 (name ""): is not an object of`}},
	}
	for name, c := range cases {
		_, err := ParsePools(c.json)
		if err == nil {
			t.Errorf("%s: accepted %s", name, c.json)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not say %q", name, err, s)
			}
		}
	}

	// Every problem is reported at once, each with its pool.
	_, err := ParsePools(`[{"name": "Bad", "namespace": "n", "arrivalWindowsSeconds": [30]}, {"namespace": ""}]`)
	for _, s := range []string{`pool 1 (name "Bad"): name is not`, `arrivalWindowsSeconds has 1`,
		`pool 2 (name ""): "name" is missing`, `"namespace" is missing`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v does not say %q", err, s)
		}
	}
}

// EXPORTER_POOLS (or --pools) replaces the one-pool keys: no namespace file is
// needed, and a namespace or selector given beside it is refused, not ignored.
func TestConfigPools(t *testing.T) {
	pools := `[{"name": "code", "namespace": "agents-code"}]`
	base := map[string]string{"EXPORTER_API_URL": "https://x", "EXPORTER_TOKEN_FILE": filepath.Join(t.TempDir(), "token")}
	with := func(extra map[string]string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return envOf(m)
	}
	cfg, err := LoadConfig(nil, with(map[string]string{"EXPORTER_POOLS": pools}), io.Discard)
	if err != nil || !reflect.DeepEqual(cfg.Pools, []Pool{{Name: "code", Namespace: "agents-code"}}) {
		t.Errorf("EXPORTER_POOLS: pools %+v, err %v", cfg.Pools, err)
	}
	cfg, err = LoadConfig([]string{"--pools", `[{"name": "flag", "namespace": "f"}]`}, with(map[string]string{"EXPORTER_POOLS": pools}), io.Discard)
	if err != nil || len(cfg.Pools) != 1 || cfg.Pools[0].Name != "flag" {
		t.Errorf("--pools over EXPORTER_POOLS: pools %+v, err %v", cfg.Pools, err)
	}
	for name, extra := range map[string]map[string]string{
		"EXPORTER_NAMESPACE": {"EXPORTER_POOLS": pools, "EXPORTER_NAMESPACE": "ns"},
		"EXPORTER_SELECTOR":  {"EXPORTER_POOLS": pools, "EXPORTER_SELECTOR": "k=v"},
	} {
		if _, err := LoadConfig(nil, with(extra), io.Discard); err == nil || !strings.Contains(err.Error(), "unset EXPORTER_NAMESPACE") {
			t.Errorf("%s beside EXPORTER_POOLS: err %v, want it refused with the fix", name, err)
		}
	}
	if _, err := LoadConfig(nil, with(map[string]string{"EXPORTER_POOLS": `[{"name": "x"}]`}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "EXPORTER_POOLS") {
		t.Errorf("a bad EXPORTER_POOLS: err %v", err)
	}
}

// Entry by entry, the exporter keeps what it can serve: each refused entry is named with its
// place, a duplicated name refuses every entry that has it, and an overlap refuses the later one.
func TestPoolEntriesRefusedOneByOne(t *testing.T) {
	pools, refused, err := ParsePoolEntries(`[
		{"name": "code", "namespace": "agents-code"},
		{"name": "Typo", "namespace": "agents-typo"},
		{"name": "twice", "namespace": "t1"},
		{"name": "browser", "namespace": "agents-browser", "selector": " kind=browser"},
		{"name": "twice", "namespace": "t2"},
		{"name": "data", "namespace": "agents-data", "arrivalWindowsSeconds": [30, 180]},
		{"name": "overlap", "namespace": "agents-code", "selector": "k=v"},
		{"name": "extra", "namespace": "agents-extra", "replicas": 3}
	]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pool{{Name: "code", Namespace: "agents-code"},
		{Name: "data", Namespace: "agents-data", ShortWindow: 30 * time.Second, LongWindow: 180 * time.Second}}
	if !reflect.DeepEqual(pools, want) {
		t.Errorf("served = %+v\nwant     %+v", pools, want)
	}
	wantRefused := map[int]string{2: "not a DNS label", 3: "used by pool 5 too", 4: "surrounding or control whitespace",
		5: "used by pool 3 too", 7: `shares namespace "agents-code" with pool 1`, 8: `unknown field "replicas"`}
	if len(refused) != len(wantRefused) {
		t.Errorf("refused %d entries, want %d: %v", len(refused), len(wantRefused), refused)
	}
	for _, r := range refused {
		if say, ok := wantRefused[r.Index]; !ok || !strings.Contains(r.Problem, say) {
			t.Errorf("refused %v; want entry %d refused saying %q", r, r.Index, say)
		}
	}
	if refused[len(refused)-1].Name != "extra" {
		t.Errorf("an entry that does not decode keeps its name for the report: %+v", refused[len(refused)-1])
	}

	// The whole list is refused by ParsePools, which the program runs at preview.
	if _, err := ParsePools(`[{"name": "code", "namespace": "agents-code"}, {"name": "Typo", "namespace": "x"}]`); err == nil {
		t.Error("ParsePools accepted a list with a bad entry")
	}
}

// At start, a list with one bad entry serves the rest; a list with no entry to serve is refused.
func TestConfigServesTheGoodEntries(t *testing.T) {
	env := map[string]string{"EXPORTER_API_URL": "https://x", "EXPORTER_TOKEN_FILE": filepath.Join(t.TempDir(), "token"),
		"EXPORTER_POOLS": `[{"name": "code", "namespace": "agents-code"}, {"name": "Typo", "namespace": "x"}]`}
	cfg, err := LoadConfig(nil, envOf(env), io.Discard)
	if err != nil || len(cfg.Pools) != 1 || cfg.Pools[0].Name != "code" || len(cfg.Refused) != 1 || cfg.Refused[0].Index != 2 {
		t.Errorf("one bad entry of two: pools %+v, refused %+v, err %v; want code served and entry 2 refused", cfg.Pools, cfg.Refused, err)
	}
	env["EXPORTER_POOLS"] = `[{"name": "Typo", "namespace": "x"}, {"name": "", "namespace": "y"}]`
	if _, err := LoadConfig(nil, envOf(env), io.Discard); err == nil || !strings.Contains(err.Error(), "no entry can be served") ||
		!strings.Contains(err.Error(), `pool 2 (name "")`) {
		t.Errorf("no good entry: err %v, want it refused naming each entry", err)
	}
}
