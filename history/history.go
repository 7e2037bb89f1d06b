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
//
// The input is streamed, and what no history holds is refused as soon as it is read (Limits):
// a line over MaxLineBytes, a NUL byte, a claim held longer than Limits.MaxClaim, a time outside
// the years 2000 to 2099, a history longer than Limits.MaxSpan.
package history

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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

// Limits bound what a history may hold. One absurd row (a claim held ten years, a deletion in
// year 9999) would otherwise turn the replay into thousands of days and silently change the
// advice: it is refused as soon as it is read, naming its line.
type Limits struct {
	// MaxClaim is the longest a claim may be held, creation to deletion.
	MaxClaim time.Duration
	// MaxSpan is the longest a history may cover, first creation to last time recorded.
	MaxSpan time.Duration
}

// DefaultLimits: a day per claim, 400 days per history (a year and a margin).
var DefaultLimits = Limits{MaxClaim: 24 * time.Hour, MaxSpan: 400 * 24 * time.Hour}

// Check refuses limits that cannot bound anything.
func (l Limits) Check() error {
	if l.MaxClaim <= 0 {
		return fmt.Errorf("the longest claim must be above 0, not %s", l.MaxClaim)
	}
	if l.MaxSpan <= 0 {
		return fmt.Errorf("the longest history must be above 0, not %s", l.MaxSpan)
	}
	return nil
}

// Times a history may hold: a claim of an EKS cluster was made in this century. A time outside
// is a clock that was never set or a placeholder (0001-01-01, 9999-12-31).
var (
	earliestTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latestTime   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// MaxLineBytes is the longest line a history may have: a row is four short fields, so a longer
// line is not a history (a binary file, one endless line) and is refused before it is held.
const MaxLineBytes = 64 << 10

// maxErrors is how many bad rows are collected before reading stops; maxShown of them are shown.
const (
	maxErrors = 100
	maxShown  = 5
)

// Read reads a history in either encoding under DefaultLimits.
func Read(r io.Reader, name string) (*History, error) {
	return ReadLimited(r, name, DefaultLimits)
}

// ReadLimited reads a history in either encoding: JSON lines when its first non-blank byte is
// '{', CSV with a header row otherwise. name says where it came from, in messages. The input is
// streamed: memory grows with the claims read, not with the file.
func ReadLimited(r io.Reader, name string, lim Limits) (*History, error) {
	if err := lim.Check(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	first, err := lr.firstByte()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if first == 0 {
		return nil, fmt.Errorf("%s: the history is empty; it needs one row per claim (%s)", name, formatHint)
	}
	b := newBuilder(name, lim)
	if first == '{' {
		err = readJSONLines(lr, b)
	} else {
		err = readCSV(lr, b)
	}
	if err != nil {
		return nil, err
	}
	return b.history()
}

const formatHint = "CSV with the header pool,claim,created,deleted, or JSON lines {\"pool\":...,\"claim\":...,\"created\":...,\"deleted\":...}; times in RFC 3339"

// lineReader reads the input a line at a time, refusing what no history holds: a line longer
// than MaxLineBytes or a NUL byte (not text). It counts lines for messages.
type lineReader struct {
	r    *bufio.Reader
	line int // lines read so far
}

// firstByte is the first non-blank byte, or 0 for input with none; it is not consumed.
func (l *lineReader) firstByte() (byte, error) {
	for {
		c, err := l.r.ReadByte()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			if c == '\n' {
				l.line++
			}
			continue
		case 0:
			return 0, fmt.Errorf("line %d: a NUL byte: this is not a text file (%s)", l.line+1, formatHint)
		}
		return c, l.r.UnreadByte()
	}
}

// next returns the next line without its end, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	var buf []byte
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes+1 {
			return nil, fmt.Errorf("line %d: longer than %d KiB, which no row of a history is: is this the right file? (%s)", l.line+1, MaxLineBytes>>10, formatHint)
		}
		buf = append(buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(buf) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("line %d: %v", l.line+1, err)
		}
		l.line++
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			return nil, fmt.Errorf("line %d: a NUL byte at column %d: this is not a text file (%s)", l.line, i+1, formatHint)
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}

// row is one claim as written, before its times are checked.
type row struct {
	line                          int
	pool, claim, created, deleted string
}

var columns = []string{"pool", "claim", "created", "deleted"}

// readCSV reads the header, then each row into b. The rows are split line by line: a history's
// fields hold no line breaks (pool and claim names are Kubernetes names, times RFC 3339).
func readCSV(lr *lineReader, b *builder) error {
	text, err := lr.next()
	if err != nil {
		return fmt.Errorf("%s: %v", b.name, err)
	}
	header, err := csvFields(text)
	if err != nil {
		return fmt.Errorf("%s: line %d: %v", b.name, lr.line, err)
	}
	at := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, dup := at[h]; dup {
			return fmt.Errorf("%s: line %d: column %q appears twice", b.name, lr.line, h)
		}
		if !slices.Contains(columns, h) {
			return fmt.Errorf("%s: line %d: unknown column %q; the header names pool (optional), claim, created and deleted", b.name, lr.line, h)
		}
		at[h] = i
	}
	for _, c := range []string{"claim", "created", "deleted"} {
		if _, ok := at[c]; !ok {
			return fmt.Errorf("%s: line %d: the header has no %q column (%s)", b.name, lr.line, c, formatHint)
		}
	}
	field := func(rec []string, c string) string {
		if i, ok := at[c]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for !b.full() {
		text, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", b.name, err)
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		r := row{line: lr.line}
		rec, err := csvFields(text)
		switch {
		case err != nil:
			b.fail(r, "%v", err)
		case len(rec) != len(header):
			b.fail(r, "%d fields, the header has %d", len(rec), len(header))
		default:
			r.pool, r.claim, r.created, r.deleted = field(rec, "pool"), field(rec, "claim"), field(rec, "created"), field(rec, "deleted")
			b.add(r)
		}
	}
	return nil
}

// csvFields splits one CSV line (quotes allowed) into its fields. A line without quotes, as
// every exporter writes, is split on its commas: a csv.Reader per line allocated a 4 KiB buffer
// each, which a million rows turned into gigabytes of garbage.
func csvFields(line []byte) ([]string, error) {
	if bytes.IndexByte(line, '"') < 0 {
		fields := strings.Split(string(line), ",")
		for i, f := range fields {
			fields[i] = strings.TrimLeft(f, " \t")
		}
		return fields, nil
	}
	cr := csv.NewReader(bytes.NewReader(line))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	rec, err := cr.Read()
	if err == io.EOF {
		return []string{""}, nil
	}
	if pe, ok := err.(*csv.ParseError); ok {
		return nil, fmt.Errorf("column %d: %v", pe.Column, pe.Err)
	}
	return rec, err
}

func readJSONLines(lr *lineReader, b *builder) error {
	for !b.full() {
		line, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", b.name, err)
		}
		text := bytes.TrimSpace(line)
		if len(text) == 0 {
			continue
		}
		r := row{line: lr.line}
		var v struct {
			Pool    *string `json:"pool"`
			Claim   *string `json:"claim"`
			Created *string `json:"created"`
			Deleted *string `json:"deleted"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			b.fail(r, "not a claim object: %v (%s)", err, formatHint)
			continue
		}
		if dec.More() {
			b.fail(r, "more than one object on the line")
			continue
		}
		str := func(p *string) string {
			if p == nil {
				return ""
			}
			return strings.TrimSpace(*p)
		}
		r.pool, r.claim, r.created, r.deleted = str(v.Pool), str(v.Claim), str(v.Created), str(v.Deleted)
		b.add(r)
	}
	return nil
}

// builder checks each row as it is read and assembles the history, or collects every row that
// is wrong (up to maxErrors) and returns nothing.
type builder struct {
	name  string
	lim   Limits
	pools map[string]string // each pool's name, held once
	// claims are each pool's claims as read, in 40 bytes each rather than a Claim's 88: a history
	// is held whole while it is read (rows come in any order), and this is most of it.
	claims map[string][]compactClaim
	errs   []rowError
	rows   int
	first  struct {
		at   time.Time
		line int
	}
	last struct {
		at   time.Time
		line int
	}
}

func newBuilder(name string, lim Limits) *builder {
	return &builder{name: name, lim: lim, pools: map[string]string{}, claims: map[string][]compactClaim{}}
}

// compactClaim is a claim as the builder holds it: times in Unix nanoseconds, deleted 0 for a
// claim still held.
type compactClaim struct {
	name             string
	created, deleted int64
	line             int
}

// full reports whether enough bad rows were seen to stop reading.
func (b *builder) full() bool { return len(b.errs) >= maxErrors }

// rowError is what is wrong with a row.
type rowError struct {
	line int
	what string
}

func (b *builder) fail(r row, format string, a ...any) {
	b.rows++
	b.errs = append(b.errs, rowError{r.line, fmt.Sprintf(format, a...)})
}

func (b *builder) add(r row) {
	pool := r.pool
	if pool == "" {
		pool = DefaultPool
	}
	if r.claim == "" {
		b.fail(r, "claim is empty; every row names its claim")
		return
	}
	if p, ok := b.pools[pool]; ok {
		pool = p
	} else {
		pool = strings.Clone(pool)
		b.pools[pool] = pool
	}
	// Every claim named is kept, even after a bad row (nothing is returned then), so that a
	// claim named twice is found (duplicates) whatever the rows around it.
	b.claims[pool] = append(b.claims[pool], compactClaim{name: strings.Clone(r.claim), line: r.line})
	c := &b.claims[pool][len(b.claims[pool])-1]
	created, err := parseTime(r.created)
	if err != nil {
		b.fail(r, "created %v", err)
		return
	}
	c.created = created.UnixNano()
	end := created
	if r.deleted != "" {
		deleted, err := parseTime(r.deleted)
		if err != nil {
			b.fail(r, "deleted %v", err)
			return
		}
		if deleted.Before(created) {
			b.fail(r, "deleted %s is before created %s (a clock that jumped back?); fix the row or drop it", r.deleted, r.created)
			return
		}
		if held := deleted.Sub(created); held > b.lim.MaxClaim {
			b.fail(r, "claim %q was held %s, longer than the longest a claim may be (%s): a clock that jumped, or a session the history should not hold; fix the row, drop it, or raise the bound (advise: --max-claim-duration)", r.claim, held.Round(time.Second), b.lim.MaxClaim)
			return
		}
		c.deleted, end = deleted.UnixNano(), deleted
	}
	b.rows++
	if b.first.at.IsZero() || created.Before(b.first.at) {
		b.first.at, b.first.line = created, r.line
	}
	if end.After(b.last.at) {
		b.last.at, b.last.line = end, r.line
	}
}

// duplicates fails every claim named a second time in its pool, naming the line it was first
// on. The names are sorted rather than kept in a map as they are read: a map of a million
// names was the largest thing a history held.
func (b *builder) duplicates() {
	for pool, cs := range b.claims {
		order := make([]int32, len(cs))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(i, j int32) int {
			if c := strings.Compare(cs[i].name, cs[j].name); c != 0 {
				return c
			}
			return cs[i].line - cs[j].line
		})
		for k := 1; k < len(order); k++ {
			first := cs[order[k-1]]
			for k < len(order) && cs[order[k]].name == first.name {
				again := cs[order[k]]
				b.errs = append(b.errs, rowError{again.line, fmt.Sprintf("claim %q of pool %s appears again (first on line %d); a claim is one row from its creation to its deletion", again.name, pool, first.line)})
				k++
			}
		}
	}
	slices.SortStableFunc(b.errs, func(x, y rowError) int { return x.line - y.line })
}

// history returns what was read, or every bad row (up to maxShown, the rest counted).
func (b *builder) history() (*History, error) {
	b.duplicates()
	if len(b.errs) > 0 {
		var errs []error
		for _, e := range b.errs {
			errs = append(errs, fmt.Errorf("%s: line %d: %s", b.name, e.line, e.what))
		}
		more := ""
		if len(errs) > maxShown {
			more = fmt.Sprintf("\n(%d more", len(errs)-maxShown)
			if b.full() {
				more += fmt.Sprintf("; reading stopped at the %dth bad row", maxErrors)
			}
			more += ")"
			errs = errs[:maxShown]
		}
		return nil, fmt.Errorf("%w%s", errors.Join(errs...), more)
	}
	if b.rows == 0 {
		return nil, fmt.Errorf("%s: the history has a header and no claims", b.name)
	}
	if span := b.last.at.Sub(b.first.at); span > b.lim.MaxSpan {
		return nil, fmt.Errorf("%s: the history spans %s (line %d's %s to line %d's %s), more than the longest a history may (%s): a row with a wrong date, or a history to cut into parts; fix or drop the row, or give advise the months that matter",
			b.name, span.Round(time.Hour), b.first.line, b.first.at.Format(time.RFC3339), b.last.line, b.last.at.Format(time.RFC3339), b.lim.MaxSpan)
	}
	h := &History{Pools: map[string][]Claim{}, Start: b.first.at.UTC(), End: b.last.at.UTC()}
	for pool, cs := range b.claims {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].created < cs[j].created })
		out := make([]Claim, len(cs))
		for i, c := range cs {
			out[i] = Claim{Pool: pool, Name: c.name, Created: time.Unix(0, c.created).UTC(), Line: c.line}
			if c.deleted != 0 {
				out[i].Deleted = time.Unix(0, c.deleted).UTC()
			}
		}
		h.Pools[pool] = out
		delete(b.claims, pool) // each pool's compact copy goes as its claims are made
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
	if t.Before(earliestTime) || !t.Before(latestTime) {
		return time.Time{}, fmt.Errorf("%s is outside the years %d to %d: a clock that was never set, or a placeholder for \"never\" (leave deleted empty for a claim still held)", s, earliestTime.Year(), latestTime.Year()-1)
	}
	return t, nil
}
