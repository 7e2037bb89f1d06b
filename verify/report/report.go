// Package report is verify's report: every check with its evidence, the demand steps and the
// control window, printed as they happen and written as JSON (--json). The end-to-end test
// decodes that JSON into these types, so the contract is compiled on both sides.
package report

import (
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
	Phase    string `json:"phase"`
	Name     string `json:"name"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence"`
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
}

// ControlWindow is what the control watched while no autoscaler was present.
type ControlWindow struct {
	WindowSeconds float64 `json:"windowSeconds"`
	Derivation    string  `json:"derivation"`
	Readings      int     `json:"readings"`
	Baseline      int64   `json:"baseline"`
	Values        []int64 `json:"distinctValues"`
}

// Report collects checks and measurements and prints them as they happen.
type Report struct {
	mu  sync.Mutex
	out io.Writer

	Checks                 []Check        `json:"checks"`
	ScaleUp                []Step         `json:"scaleUp"`
	ScaleDown              []Step         `json:"scaleDown"`
	Control                *ControlWindow `json:"control,omitempty"`
	AdoptionLatencySeconds *float64       `json:"adoptionLatencySeconds,omitempty"`
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
func (r *Report) Printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+"\n", args...)
}

func (r *Report) add(phase, name string, s Status, evidence string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Checks = append(r.Checks, Check{Phase: phase, Name: name, Status: s, Evidence: evidence})
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
	fmt.Fprintf(r.out, "%s %s: %s\n", s, name, evidence)
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
