package framework

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/exporter"
)

// loadAsTheExporterDoes parses e's command line and environment with the exporter's own LoadConfig.
func loadAsTheExporterDoes(t *testing.T, e LocalExporter) exporter.Config {
	t.Helper()
	env := map[string]string{}
	for _, kv := range e.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := exporter.LoadConfig(e.Args(), func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the exporter refuses %q %v: %v", e.Args(), e.Env(), err)
	}
	return cfg
}

// The one starter's command line is one the exporter parses back to the same settings: one
// pool by flags, or several by EXPORTER_POOLS.
func TestLocalExporterStartsTheExporterWithItsSettings(t *testing.T) {
	one := LocalExporter{APIURL: "https://127.0.0.1:6443", CAFile: "/pki/ca.crt", TokenFile: "/secrets/token",
		Addr: "127.0.0.1:20001", Namespace: "pool-ns", Selector: "team=a", ReadTimeout: 60 * time.Second}
	want := exporter.Config{APIURL: one.APIURL, TokenFile: one.TokenFile, CAFile: one.CAFile, Listen: one.Addr,
		Pools: []exporter.Pool{{Namespace: "pool-ns", Selector: "team=a"}}, ReadTimeout: time.Minute}
	if got := loadAsTheExporterDoes(t, one); !reflect.DeepEqual(got, want) {
		t.Errorf("one pool: the exporter reads %+v\nwant %+v", got, want)
	}

	several := LocalExporter{APIURL: "https://x", CAFile: "c", TokenFile: "t", Addr: "127.0.0.1:20002",
		Pools: `[{"name":"code","namespace":"code-ns"},{"name":"browse","namespace":"browse-ns","selector":"k=v"}]`}
	got := loadAsTheExporterDoes(t, several)
	if len(got.Pools) != 2 || got.Pools[0].Namespace != "code-ns" || got.Pools[1].Selector != "k=v" {
		t.Errorf("several pools: the exporter reads pools %+v, want code-ns and browse-ns (k=v)", got.Pools)
	}
}
