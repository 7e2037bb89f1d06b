// Package history reads a team's claim history: when each SandboxClaim was created and deleted,
// per pool. It is what `advise` replays; one documented format in two encodings, CSV
// and JSON lines, read whole or refused whole: a bad row is an error naming its line and field,
// and nothing half-read is returned.
//
// The format, one claim per row:
//
//	pool,claim,created,deleted
//	code,claim-0001,2026-12-01T08:00:01Z,2026-12-01T08:00:41Z
//	code,claim-0002,2026-12-01T08:00:02.5Z,
//
// or, as JSON lines, {"pool":"code","claim":"claim-0001","created":"...","deleted":"..."}.
// created and deleted are RFC 3339 times; an empty (or absent) deleted is a claim still held
// when the history ends. pool may be empty (or the column absent) for a one-pool history: its
// rows go to the pool named DefaultPool. Rows may come in any order.
package history

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// DefaultPool is the pool of rows that name none.
const DefaultPool = "default"

// Claim is one claim's life. Deleted is the zero time for a claim still held at the end.
type Claim struct {
	Pool, Name       string
	Created, Deleted time.Time
	Line             int // where it was read, for messages
}

// Held reports whether the claim was still held when the history ends.
func (c Claim) Held() bool { return c.Deleted.IsZero() }

// History is every claim read, per pool, each pool's claims by creation time; Start and End
// bound it: the first creation and the last time it records (a deletion, or a creation when
// that is later). A history rebuilt from a Prometheus (FromPrometheus) is bounded by the range
// asked instead, and says more: see its fields.
type History struct {
	Pools      map[string][]Claim
	Start, End time.Time
	// Resolution is how far a time may be from the real one: 0 for a history read from a file
	// (as written), the step for one rebuilt from a Prometheus.
	Resolution time.Duration
	// Observed is, per pool, the claims the agent-sandbox controller counted as served warm and
	// cold over the history (launch_type): the warm-hit share the team really got, to hold the
	// model's against. Nil for a history read from a file.
	Observed map[string]Launches
	// HeldAtStart is, per pool, the claims already held when a rebuilt history starts: created
	// before it, so not among its claims. Nil for a history read from a file.
	HeldAtStart map[string]int
}

// Span is how long the history covers.
func (h *History) Span() time.Duration { return h.End.Sub(h.Start) }

// PoolNames are the pools, sorted.
func (h *History) PoolNames() []string {
	names := make([]string, 0, len(h.Pools))
	for p := range h.Pools {
		names = append(names, p)
	}
	sort.Strings(names)
	return names
}

// Arrival is a claim as the replay model reads it: its creation, from the history's Start, and
// how long it was held. A claim still held at the end is held to End (its lifetime is then a
// lower bound; Censored says so).
type Arrival struct {
	At, Lifetime time.Duration
	Censored     bool
}

// Arrivals are the pool's claims in creation order, from the history's Start.
func (h *History) Arrivals(pool string) []Arrival {
	cs := h.Pools[pool]
	out := make([]Arrival, len(cs))
	for i, c := range cs {
		end, censored := c.Deleted, false
		if c.Held() {
			end, censored = h.End, true
		}
		out[i] = Arrival{At: c.Created.Sub(h.Start), Lifetime: end.Sub(c.Created), Censored: censored}
	}
	return out
}

// Read reads a history in either encoding: JSON lines when its first non-blank byte is '{',
// CSV with a header row otherwise. name says where it came from, in messages.
func Read(r io.Reader, name string) (*History, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: the history is empty; it needs one row per claim (%s)", name, formatHint)
	}
	var rows []row
	if trimmed[0] == '{' {
		rows, err = readJSONLines(b, name)
	} else {
		rows, err = readCSV(b, name)
	}
	if err != nil {
		return nil, err
	}
	return build(rows, name)
}

const formatHint = "CSV with the header pool,claim,created,deleted, or JSON lines {\"pool\":...,\"claim\":...,\"created\":...,\"deleted\":...}; times in RFC 3339"

// row is one claim as written, before its times are checked.
type row struct {
	line                          int
	pool, claim, created, deleted string
}

var columns = []string{"pool", "claim", "created", "deleted"}

func readCSV(b []byte, name string) ([]row, error) {
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = -1 // checked below, with the line named
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: line 1: %v", name, err)
	}
	at := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, dup := at[h]; dup {
			return nil, fmt.Errorf("%s: line 1: column %q appears twice", name, h)
		}
		known := false
		for _, c := range columns {
			known = known || c == h
		}
		if !known {
			return nil, fmt.Errorf("%s: line 1: unknown column %q; the header names pool (optional), claim, created and deleted", name, h)
		}
		at[h] = i
	}
	for _, c := range []string{"claim", "created", "deleted"} {
		if _, ok := at[c]; !ok {
			return nil, fmt.Errorf("%s: line 1: the header has no %q column (%s)", name, c, formatHint)
		}
	}
	field := func(rec []string, c string) string {
		if i, ok := at[c]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s: line %d: %d fields, the header has %d", name, line, len(rec), len(header))
		}
		rows = append(rows, row{line: line, pool: field(rec, "pool"), claim: field(rec, "claim"), created: field(rec, "created"), deleted: field(rec, "deleted")})
	}
}

func readJSONLines(b []byte, name string) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v struct {
			Pool    *string `json:"pool"`
			Claim   *string `json:"claim"`
			Created *string `json:"created"`
			Deleted *string `json:"deleted"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: line %d: not a claim object: %v (%s)", name, line, err, formatHint)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: line %d: more than one object on the line", name, line)
		}
		str := func(p *string) string {
			if p == nil {
				return ""
			}
			return strings.TrimSpace(*p)
		}
		rows = append(rows, row{line: line, pool: str(v.Pool), claim: str(v.Claim), created: str(v.Created), deleted: str(v.Deleted)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return rows, nil
}

// build checks every row's times and names and assembles the history, or names every row that
// is wrong (up to a few) and returns nothing.
func build(rows []row, name string) (*History, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: the history has a header and no claims", name)
	}
	var errs []error
	add := func(r row, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: line %d: %s", name, r.line, fmt.Sprintf(format, a...)))
	}
	h := &History{Pools: map[string][]Claim{}}
	seen := map[[2]string]int{}
	for _, r := range rows {
		pool := r.pool
		if pool == "" {
			pool = DefaultPool
		}
		if r.claim == "" {
			add(r, "claim is empty; every row names its claim")
			continue
		}
		if first, dup := seen[[2]string{pool, r.claim}]; dup {
			add(r, "claim %q of pool %s appears again (first on line %d); a claim is one row from its creation to its deletion", r.claim, pool, first)
			continue
		}
		seen[[2]string{pool, r.claim}] = r.line
		created, err := parseTime(r.created)
		if err != nil {
			add(r, "created %v", err)
			continue
		}
		c := Claim{Pool: pool, Name: r.claim, Created: created, Line: r.line}
		if r.deleted != "" {
			if c.Deleted, err = parseTime(r.deleted); err != nil {
				add(r, "deleted %v", err)
				continue
			}
			if c.Deleted.Before(created) {
				add(r, "deleted %s is before created %s (a clock that jumped back?); fix the row or drop it", r.deleted, r.created)
				continue
			}
		}
		h.Pools[pool] = append(h.Pools[pool], c)
	}
	if len(errs) > 0 {
		const shown = 5
		more := ""
		if len(errs) > shown {
			more = fmt.Sprintf("\n(%d more)", len(errs)-shown)
			errs = errs[:shown]
		}
		return nil, fmt.Errorf("%w%s", errors.Join(errs...), more)
	}
	for p, cs := range h.Pools {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Created.Before(cs[j].Created) })
		h.Pools[p] = cs
		for _, c := range cs {
			if h.Start.IsZero() || c.Created.Before(h.Start) {
				h.Start = c.Created
			}
			h.End = later(h.End, later(c.Created, c.Deleted))
		}
	}
	return h, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// parseTime reads an RFC 3339 time, fractions of a second allowed.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("is empty; it must be an RFC 3339 time such as 2026-12-01T08:00:01Z")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time such as 2026-12-01T08:00:01Z", s)
	}
	return t, nil
}
