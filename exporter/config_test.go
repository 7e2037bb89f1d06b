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
