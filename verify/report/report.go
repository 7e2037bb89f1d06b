// Package report is verify's report: every check with its evidence, the demand steps and the
// control window, printed as they happen and written as JSON (--json). The end-to-end test
// decodes that JSON into these types, so the contract is compiled on both sides.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Status is a check's outcome. SKIP and N/A are never counted as passes.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
	// NA: the check does not apply to what was declared (a VM-only reading
	// under --isolation gvisor, adoption at a zero floor); the reading that
	// was taken is printed with it.
	NA Status = "N/A"
)

// Check is one named assertion with the evidence it read.
type Check struct {
	Phase string `json:"phase"`
	// Name carries the pool ("[code] scale up: ...") when the stack has several pools.
	Name     string `json:"name"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence"`
	// Pool is the pool the check is about ("" for the run as a whole and the cross-pool control).
	Pool string `json:"pool,omitempty"`
}

// Step is one demand level and the pool's decision for it.
type Step struct {
	Claims         int      `json:"claims"`
	Expected       int64    `json:"expected"`
	SpecReplicas   *int64   `json:"specReplicas"`
	ReadyReplicas  *int64   `json:"readyReplicas"`
	LatencySeconds *float64 `json:"latencySeconds"`
	Seen           []int64  `json:"specReplicasSeen,omitempty"`
	Note           string   `json:"note,omitempty"`
	// FormulaReadings are the exporter readings a formula-sized step (the arrivals policy) was
	// held to, in the order taken; Expected is the formula's answer on the one that matched.
	FormulaReadings []FormulaReading `json:"formulaReadings,omitempty"`
}

// FormulaReading is one read of the exporter for a formula-sized pool and what the
// ScaledObject's formula makes of it.
type FormulaReading struct {
	// AtSeconds is when the reading was taken, in seconds after the demand changed.
	AtSeconds float64 `json:"atSeconds"`
	// Inputs are the formula's variables (the triggers' names) and the values read for them.
	Inputs       map[string]float64 `json:"inputs"`
	ActiveClaims int64              `json:"activeClaims"`
	ReadAt       string             `json:"readAt,omitempty"`
	// Value is the formula's result; Want is clamp(ceil(Value / target), min, max).
	Value float64 `json:"value"`
	Want  int64   `json:"want"`
	// SpecReplicas is the pool's spec.replicas read just before this reading.
	SpecReplicas int64 `json:"specReplicas"`
	// Counted: the reading showed this step's demand (active_claims), so it could be held to.
	Counted bool `json:"counted"`
}

// ControlWindow is what the control watched while no autoscaler was present.
type ControlWindow struct {
	WindowSeconds float64 `json:"windowSeconds"`
	Derivation    string  `json:"derivation"`
	Readings      int     `json:"readings"`
	Baseline      int64   `json:"baseline"`
	Values        []int64 `json:"distinctValues"`
}

// PoolReport is one pool's demand steps and control window.
type PoolReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Sizing is the mapping verify held the steps to, as read from the live ScaledObject:
	// "claims" (ceil(claims / target) + headroom) or "arrivals" (the arrivals formula).
	Sizing                 string         `json:"sizing,omitempty"`
	ScaleUp                []Step         `json:"scaleUp"`
	ScaleDown              []Step         `json:"scaleDown"`
	Control                *ControlWindow `json:"control,omitempty"`
	AdoptionLatencySeconds *float64       `json:"adoptionLatencySeconds,omitempty"`
}

// CrossPool is the cross-pool control: demand on one pool at a time while every pool's
// spec.replicas is read. Skipped (with the reason) when the stack has one pool.
type CrossPool struct {
	Skipped string           `json:"skipped,omitempty"`
	Rounds  []CrossPoolRound `json:"rounds,omitempty"`
}

// CrossPoolRound is one driven pool: its claims, the window, and every pool's readings.
type CrossPoolRound struct {
	Driven        string       `json:"driven"`
	Claims        int          `json:"claims"`
	WindowSeconds float64      `json:"windowSeconds"`
	Derivation    string       `json:"derivation"`
	Pools         []PoolSeries `json:"pools"`
}

// PoolSeries is one pool's spec.replicas over a cross-pool window.
type PoolSeries struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Floor is the pool's size at no demand (its own mapping at zero).
	Floor    int64   `json:"floor"`
	Readings int     `json:"readings"`
	Values   []int64 `json:"distinctValues"`
	// Series is every reading: seconds after the claims were created, and spec.replicas.
	Series []SeriesPoint `json:"series"`
}

// SeriesPoint is one reading of spec.replicas.
type SeriesPoint struct {
	AtSeconds    float64 `json:"atSeconds"`
	SpecReplicas int64   `json:"specReplicas"`
}

// Report collects checks and measurements and prints them as they happen.
type Report struct {
	mu  sync.Mutex
	out io.Writer

	Checks []Check `json:"checks"`
	// ScaleUp, ScaleDown, Control and AdoptionLatencySeconds are the first pool's (the only
	// one's in a one-pool stack); Pools has every pool's.
	ScaleUp                []Step         `json:"scaleUp"`
	ScaleDown              []Step         `json:"scaleDown"`
	Control                *ControlWindow `json:"control,omitempty"`
	AdoptionLatencySeconds *float64       `json:"adoptionLatencySeconds,omitempty"`
	Pools                  []*PoolReport  `json:"pools,omitempty"`
	CrossPool              *CrossPool     `json:"crossPool,omitempty"`
	Passed                 int            `json:"passed"`
	Failed                 int            `json:"failed"`
	Skipped                int            `json:"skipped"`
	NotApplicable          int            `json:"notApplicable"`
	// Refused is why verify refused to run (exit 2); nothing was touched then.
	Refused  string `json:"refused,omitempty"`
	ExitCode int    `json:"exitCode"`
}

// New makes a report that prints to out as checks are added.
func New(out io.Writer) *Report { return &Report{out: out} }

// Section prints a phase heading in the blueprint's "== i/n title ==" form.
func (r *Report) Section(i, n int, title string) {
	r.Printf("== %d/%d %s ==", i, n, title)
}

// Printf prints a progress or evidence line (not a check).
func (r *Report) Printf(format string, args ...any) { r.printf(nil, format, args...) }

// printf prints a line of scope's (nil: the report's own).
func (r *Report) printf(scope *Scoped, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.writer(scope), format+"\n", args...)
}

func (r *Report) add(phase, name string, s Status, evidence string) {
	r.addFor(nil, "", phase, name, s, evidence)
}

// addFor records a check and prints it: held while scope (nil: none) holds its lines.
func (r *Report) addFor(scope *Scoped, pool, phase, name string, s Status, evidence string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Checks = append(r.Checks, Check{Phase: phase, Name: name, Status: s, Evidence: evidence, Pool: pool})
	switch s {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	case Skip:
		r.Skipped++
	case NA:
		r.NotApplicable++
	}
	fmt.Fprintf(r.writer(scope), "%s %s: %s\n", s, name, evidence)
}

// writer is where a line of scope's goes: its held lines, or out. Called with mu held.
func (r *Report) writer(scope *Scoped) io.Writer {
	if scope != nil && scope.held != nil {
		return scope.held
	}
	return r.out
}

func (r *Report) Pass(phase, name, evidence string) { r.add(phase, name, Pass, evidence) }
func (r *Report) Fail(phase, name, evidence string) { r.add(phase, name, Fail, evidence) }
func (r *Report) Skip(phase, name, evidence string) { r.add(phase, name, Skip, evidence) }
func (r *Report) NA(phase, name, evidence string)   { r.add(phase, name, NA, evidence) }

// AddStep records one demand step of the scale-up ("up") or the scale-down ("down").
func (r *Report) AddStep(direction string, s Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if direction == "up" {
		r.ScaleUp = append(r.ScaleUp, s)
	} else {
		r.ScaleDown = append(r.ScaleDown, s)
	}
}

// Judge records PASS when ok, else FAIL, with the same evidence either way.
func (r *Report) Judge(phase, name string, ok bool, evidence string) {
	if ok {
		r.Pass(phase, name, evidence)
	} else {
		r.Fail(phase, name, evidence)
	}
}

// FinalLine is "N/M checks passed" over PASS+FAIL, with SKIPs said separately
// so a skipped check can never read as a passed one.
func (r *Report) FinalLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d checks passed", r.Passed, r.Passed+r.Failed)
	if r.Skipped > 0 {
		fmt.Fprintf(&b, " (%d skipped, not counted as passed)", r.Skipped)
	}
	if r.NotApplicable > 0 {
		fmt.Fprintf(&b, " (%d not applicable, not counted as passed)", r.NotApplicable)
	}
	if r.Failed > 0 {
		fmt.Fprintf(&b, "; %d FAILED", r.Failed)
	}
	return b.String()
}

// OK is true when nothing failed: the exit status follows it.
func (r *Report) OK() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Failed == 0
}

// Failures lists the failed check names, for the tests' messages.
func (r *Report) Failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c.Name+": "+c.Evidence)
		}
	}
	return out
}

// Find returns the checks whose name contains sub.
func (r *Report) Find(sub string) []Check {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Check
	for _, c := range r.Checks {
		if strings.Contains(c.Name, sub) {
			out = append(out, c)
		}
	}
	return out
}

// JSON is the machine-readable report.
func (r *Report) JSON() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return json.MarshalIndent(r, "", "  ")
}

// SetCrossPool records the cross-pool control.
func (r *Report) SetCrossPool(c *CrossPool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.CrossPool = c
}

// Scoped is the report as one pool's phases see it: its checks carry the pool (and, when the
// stack has several, its name in brackets before the check's name), its steps go to the pool's
// record, and the first pool's also fill the report's top-level fields.
type Scoped struct {
	*Report
	pool   *PoolReport
	prefix string
	mirror bool
	// held, when set, keeps the scope's printed lines until Release (pools run side by side
	// print one after another). Guarded by the report's mu.
	held *bytes.Buffer
}

// Hold keeps the scope's lines from now on, until Release.
func (s *Scoped) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = &bytes.Buffer{}
}

// Release prints the lines held so far and prints the scope's later lines at once.
func (s *Scoped) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		_, _ = s.out.Write(s.held.Bytes())
		s.held = nil
	}
}

// Printf prints a progress or evidence line of the scope's (held while it holds them).
func (s *Scoped) Printf(format string, args ...any) { s.printf(s, format, args...) }

// Section prints a phase heading of the scope's.
func (s *Scoped) Section(i, n int, title string) {
	s.Printf("== %d/%d %s ==", i, n, title)
}

// ForPool makes (or finds) the pool's record. labelled: check names carry "[name] ".
// mirror: the pool's steps, control and adoption latency also fill the top-level fields.
func (r *Report) ForPool(name, namespace string, labelled, mirror bool) *Scoped {
	r.mu.Lock()
	defer r.mu.Unlock()
	var p *PoolReport
	for _, x := range r.Pools {
		if x.Name == name && x.Namespace == namespace {
			p = x
		}
	}
	if p == nil {
		p = &PoolReport{Name: name, Namespace: namespace}
		r.Pools = append(r.Pools, p)
	}
	s := &Scoped{Report: r, pool: p, mirror: mirror}
	if labelled {
		s.prefix = "[" + name + "] "
	}
	return s
}

// Watcher is a slice of the report for a pool the run only reads (the cross-pool control's
// other pools when --pool names one): it prints, and is not listed in Pools.
func (r *Report) Watcher(name string, labelled bool) *Scoped {
	s := &Scoped{Report: r, pool: &PoolReport{Name: name}}
	if labelled {
		s.prefix = "[" + name + "] "
	}
	return s
}

// Name is the pool's name.
func (s *Scoped) Name() string { return s.pool.Name }

// Label is how check names name the pool: "[name] " when the stack has several, else "".
func (s *Scoped) Label() string { return s.prefix }

func (s *Scoped) Pass(phase, name, evidence string) {
	s.addFor(s, s.pool.Name, phase, s.prefix+name, Pass, evidence)
}
func (s *Scoped) Fail(phase, name, evidence string) {
	s.addFor(s, s.pool.Name, phase, s.prefix+name, Fail, evidence)
}
func (s *Scoped) Skip(phase, name, evidence string) {
	s.addFor(s, s.pool.Name, phase, s.prefix+name, Skip, evidence)
}
func (s *Scoped) NA(phase, name, evidence string) {
	s.addFor(s, s.pool.Name, phase, s.prefix+name, NA, evidence)
}

// Judge records PASS when ok, else FAIL, with the same evidence either way.
func (s *Scoped) Judge(phase, name string, ok bool, evidence string) {
	if ok {
		s.Pass(phase, name, evidence)
	} else {
		s.Fail(phase, name, evidence)
	}
}

// AddStep records one demand step of the pool's scale-up ("up") or scale-down ("down").
func (s *Scoped) AddStep(direction string, st Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if direction == "up" {
		s.pool.ScaleUp = append(s.pool.ScaleUp, st)
		if s.mirror {
			s.Report.ScaleUp = append(s.Report.ScaleUp, st)
		}
		return
	}
	s.pool.ScaleDown = append(s.pool.ScaleDown, st)
	if s.mirror {
		s.Report.ScaleDown = append(s.Report.ScaleDown, st)
	}
}

// Steps returns a copy of the pool's steps in one direction.
func (s *Scoped) Steps(direction string) []Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	if direction == "up" {
		return append([]Step(nil), s.pool.ScaleUp...)
	}
	return append([]Step(nil), s.pool.ScaleDown...)
}

// SetControl records the pool's control window.
func (s *Scoped) SetControl(c *ControlWindow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool.Control = c
	if s.mirror {
		s.Report.Control = c
	}
}

// SetAdoptionLatency records the pool's adoption latency.
func (s *Scoped) SetAdoptionLatency(seconds float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := seconds
	s.pool.AdoptionLatencySeconds = &v
	if s.mirror {
		s.Report.AdoptionLatencySeconds = &v
	}
}

// SetSizing records the mapping the pool's steps are held to.
func (s *Scoped) SetSizing(sizing string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool.Sizing = sizing
}
