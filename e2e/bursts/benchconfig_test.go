package bursts

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/replay"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The benchmark's knobs: by default both published traces, in order, and
// the pictures into the repository's docs/; BURSTS_SEED drives both traces.
func TestBenchConfigKnobs(t *testing.T) {
	cfg, err := loadBenchConfig(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.traces) != 2 || cfg.traces[0].Name != replay.TraceBurst || cfg.traces[1].Name != replay.TraceDay ||
		cfg.traces[0].Fingerprint() != "52fb0ee57aa14ed3" || cfg.traces[1].Fingerprint() != "6bdded39386ee596" {
		t.Fatalf("default traces: %v", cfg.traces)
	}
	if cfg.plots != filepath.Join("..", "..", "docs") || cfg.arrivals != "" {
		t.Errorf("defaults: plots %q, arrivals %q", cfg.plots, cfg.arrivals)
	}
	if b, d := traceBound(cfg.traces[0]), traceBound(cfg.traces[1]); b != 30 || d != 40 {
		t.Errorf("bounds %d and %d, want 30 (peak 29) and 40 (peak 36)", b, d)
	}

	cfg, err = loadBenchConfig(envOf(map[string]string{
		"BURSTS_SEED": "7", "BURSTS_TRACES": "day", "BURSTS_DURATION": "2m", "BURSTS_PLOTS": "off", "BURSTS_ARRIVALS": "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.traces) != 1 || cfg.traces[0].Name != replay.TraceDay || cfg.traces[0].Seed != 7 || cfg.traces[0].Duration != 2*time.Minute || cfg.plots != "" || cfg.arrivals != "1" {
		t.Fatalf("knobs not applied: %+v, trace %s", cfg, cfg.traces[0].Summary())
	}

	for env, want := range map[string]string{
		"BURSTS_SEED=x":      "BURSTS_SEED",
		"BURSTS_TRACES=week": "unknown trace",
		"BURSTS_ARRIVALS=on": "BURSTS_ARRIVALS",
		"BURSTS_DURATION=0s": "Duration",
	} {
		k, v, _ := strings.Cut(env, "=")
		if _, err := loadBenchConfig(envOf(map[string]string{k: v})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one mentioning %q", env, err, want)
		}
	}
}
