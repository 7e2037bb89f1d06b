package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// Two pools, each in its own namespace: their demand phases overlap (a claim of the second
// pool is created before the first pool's last), yet each pool's lines print together, the
// second pool's after the first's. --pools-in-turn runs them one after the other: the second
// pool's first claim comes after the first pool's last.
func TestPoolPhasesRunSideBySideAndPrintInTurn(t *testing.T) {
	t.Parallel()
	for _, inTurn := range []bool{false, true} {
		t.Run(map[bool]string{false: "side by side", true: "--pools-in-turn"}[inTurn], func(t *testing.T) {
			t.Parallel()
			c := twoPools(t)
			c.kwok = true
			c.start()
			cfg := poolsConfig(c)
			cfg.Phase = "demand" // no cross-pool control: every claim is a pool phase's
			cfg.PoolsInTurn = inTurn
			code, rep, out := runPools(t, context.Background(), c, cfg, blueprintExec())
			if code != 0 {
				t.Fatalf("exit %d: %v\n%s", code, rep.Failures(), out)
			}
			c.mu.Lock()
			code0, browser0 := c.created["agents-code"], c.created["agents-browser"]
			c.mu.Unlock()
			if len(code0) == 0 || len(browser0) == 0 {
				t.Fatalf("claims created: code %d, browser %d; want both pools driven", len(code0), len(browser0))
			}
			lastCode, firstBrowser := slices.MaxFunc(code0, time.Time.Compare), slices.MinFunc(browser0, time.Time.Compare)
			overlapped := firstBrowser.Before(lastCode)
			t.Logf("browser's first claim %s the code pool's last", map[bool]string{true: "before", false: "after"}[overlapped])
			if overlapped == inTurn {
				t.Errorf("pools-in-turn=%v, yet the browser pool's first claim came %s the code pool's last claim", inTurn, map[bool]string{true: "before", false: "after"}[overlapped])
			}
			// Each pool's lines together: none of browser's between code's first and last.
			lines := strings.Split(out, "\n")
			firstCodeLine, lastCodeLine := -1, -1
			for i, l := range lines {
				if strings.Contains(l, "[code]") {
					if firstCodeLine < 0 {
						firstCodeLine = i
					}
					lastCodeLine = i
				}
			}
			for i := firstCodeLine; i <= lastCodeLine && firstCodeLine >= 0; i++ {
				if strings.Contains(lines[i], "[browser]") {
					t.Fatalf("line %d is browser's, between code's lines %d and %d: the pools' output is interleaved:\n%s", i, firstCodeLine, lastCodeLine, out)
				}
			}
			if firstCodeLine < 0 || !strings.Contains(strings.Join(lines[lastCodeLine:], "\n"), "[browser]") {
				t.Errorf("want code's lines, then browser's:\n%s", out)
			}
		})
	}
}
