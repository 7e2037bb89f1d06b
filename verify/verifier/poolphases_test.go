package verifier

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two pools, each in its own namespace: their demand phases overlap (a claim of the second
// pool is created before the first pool's last), yet each pool's lines print together, the
// second pool's after the first's. --pools-in-turn runs them one after the other: the second
// pool's first claim comes after the first pool's last.
// Two pools, each in its own namespace: their demand phases overlap, yet each pool's lines print
// together, the second pool's after the first's. --pools-in-turn runs them one after the other:
// the second pool's first claim comes after the first pool's last.
//
// Overlap is shown by what happened, not by timing: side by side, each pool's first reading of
// its demand waits (up to a minute, far above the milliseconds the phases take) until the other
// pool has made its own, so the two phases must be in flight at once for either to go on.
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
			demand := func(pt PoolTarget) DemandReader { return fakeDemand{c: c, ns: pt.Namespace} }
			var meeting *firstReadings
			if !inTurn {
				meeting = newFirstReadings(time.Minute, "agents-code", "agents-browser")
				demand = func(pt PoolTarget) DemandReader {
					return meeting.reader(fakeDemand{c: c, ns: pt.Namespace}, pt.Namespace)
				}
			}
			var buf syncBuffer
			rep := newReport(&buf)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			code := execute(ctx, stop, cfg, c.kube, c.dyn, blueprintExec(), demand, rep, &buf, &buf)
			out := buf.String()
			if code != 0 {
				t.Fatalf("exit %d: %v\n%s", code, rep.Failures(), out)
			}
			if meeting != nil && !meeting.met() {
				t.Errorf("pools-in-turn=false, yet a pool's first reading of its demand waited a minute for the other pool's, which came only later or never: the phases did not run side by side")
			}
			if inTurn {
				c.mu.Lock()
				code0, browser0 := c.created["agents-code"], c.created["agents-browser"]
				c.mu.Unlock()
				if len(code0) == 0 || len(browser0) == 0 {
					t.Fatalf("claims created: code %d, browser %d; want both pools driven", len(code0), len(browser0))
				}
				if lastCode, firstBrowser := slices.MaxFunc(code0, time.Time.Compare), slices.MinFunc(browser0, time.Time.Compare); firstBrowser.Before(lastCode) {
					t.Errorf("pools-in-turn, yet the browser pool's first claim came before the code pool's last claim")
				}
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

// firstReadings holds each pool's first reading of its demand until every pool named has made
// one (or the bound passes): a meeting the pools can only all reach when their phases run at once.
type firstReadings struct {
	mu      sync.Mutex
	waiting map[string]bool // the pools not yet at the meeting
	gaveUp  []string        // the pools whose wait ran out before every pool came
	all     chan struct{}   // closed when every pool has come
	bound   time.Duration
}

func newFirstReadings(bound time.Duration, namespaces ...string) *firstReadings {
	f := &firstReadings{waiting: map[string]bool{}, all: make(chan struct{}), bound: bound}
	for _, ns := range namespaces {
		f.waiting[ns] = true
	}
	return f
}

// met says whether every pool came while the others still waited.
func (f *firstReadings) met() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.all:
		return len(f.gaveUp) == 0
	default:
		return false
	}
}

// reader is r, whose first reading for ns waits at the meeting.
func (f *firstReadings) reader(r DemandReader, ns string) DemandReader {
	return demandReaderFunc(func(ctx context.Context) (DemandReading, error) {
		f.mu.Lock()
		first := f.waiting[ns]
		if first {
			delete(f.waiting, ns)
			if len(f.waiting) == 0 {
				close(f.all)
			}
		}
		f.mu.Unlock()
		if first {
			// Not ended by ctx: a reading's own deadline is shorter than the other pool's way here
			// on a loaded machine; the fake reads no clock.
			select {
			case <-f.all:
			case <-time.After(f.bound):
				f.mu.Lock()
				f.gaveUp = append(f.gaveUp, ns)
				f.mu.Unlock()
			}
		}
		return r.Read(ctx)
	})
}

type demandReaderFunc func(ctx context.Context) (DemandReading, error)

func (f demandReaderFunc) Read(ctx context.Context) (DemandReading, error) { return f(ctx) }
