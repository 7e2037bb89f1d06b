package history

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The two encodings of one history read the same: pools apart, claims by creation time
// whatever the row order, a held claim's lifetime running to the history's end.
func TestReadBothEncodingsAlike(t *testing.T) {
	csvText := `pool,claim,created,deleted
code,c2,2026-12-01T08:00:02.5Z,
code,c1,2026-12-01T08:00:01Z,2026-12-01T08:00:41Z
browser,b1,2026-12-01T08:00:10Z,2026-12-01T08:01:10Z
`
	jsonText := `{"pool":"code","claim":"c2","created":"2026-12-01T08:00:02.5Z"}
{"pool":"code","claim":"c1","created":"2026-12-01T08:00:01Z","deleted":"2026-12-01T08:00:41Z"}

{"pool":"browser","claim":"b1","created":"2026-12-01T08:00:10Z","deleted":"2026-12-01T08:01:10Z"}
`
	for name, text := range map[string]string{"csv": csvText, "jsonl": jsonText} {
		h, err := Read(strings.NewReader(text), name)
		require.NoError(t, err, name)
		assert.Equal(t, []string{"browser", "code"}, h.PoolNames(), name)
		assert.Equal(t, at("2026-12-01T08:00:01Z"), h.Start, name)
		assert.Equal(t, at("2026-12-01T08:01:10Z"), h.End, name)
		assert.Equal(t, 69*time.Second, h.Span(), name)
		code := h.Arrivals("code")
		require.Len(t, code, 2, name)
		assert.Equal(t, Arrival{At: 0, Lifetime: 40 * time.Second}, code[0], name)
		assert.Equal(t, Arrival{At: 1500 * time.Millisecond, Lifetime: 67500 * time.Millisecond, Censored: true}, code[1], name)
		assert.Equal(t, []Arrival{{At: 9 * time.Second, Lifetime: time.Minute}}, h.Arrivals("browser"), name)
	}
}

// A one-pool history needs no pool column; its rows are the default pool's.
func TestReadOnePoolWithoutAPoolColumn(t *testing.T) {
	h, err := Read(strings.NewReader("claim,created,deleted\nc1,2026-12-01T08:00:01Z,2026-12-01T08:00:31Z\n"), "one.csv")
	require.NoError(t, err)
	assert.Equal(t, []string{DefaultPool}, h.PoolNames())
	assert.Equal(t, []Arrival{{Lifetime: 30 * time.Second}}, h.Arrivals(DefaultPool))
}

// Every bad row is refused with its line and field named, and nothing is returned.
func TestReadRefusesBadRowsNamingLineAndField(t *testing.T) {
	const header = "pool,claim,created,deleted\n"
	const good = "code,ok,2026-12-01T08:00:00Z,2026-12-01T08:00:30Z\n"
	for _, c := range []struct{ name, text, want string }{
		{"empty", "  \n", "the history is empty"},
		{"header only", header, "a header and no claims"},
		{"unknown column", "pool,claim,created,deleted,owner\n", `unknown column "owner"`},
		{"no created column", "pool,claim,deleted\n", `no "created" column`},
		{"short row", header + good + "code,c1,2026-12-01T08:00:00Z\n", "line 3: 3 fields, the header has 4"},
		{"empty claim", header + good + "code,,2026-12-01T08:00:00Z,\n", "line 3: claim is empty"},
		{"bad created", header + good + "code,c1,yesterday,\n", `line 3: created "yesterday" is not an RFC 3339 time`},
		{"no created", header + "code,c1,,\n", "line 2: created is empty"},
		{"bad deleted", header + "code,c1,2026-12-01T08:00:00Z,2026-12-01 08:01\n", `line 2: deleted "2026-12-01 08:01" is not an RFC 3339 time`},
		{"deleted before created", header + "code,c1,2026-12-01T08:00:30Z,2026-12-01T08:00:00Z\n", "line 2: deleted 2026-12-01T08:00:00Z is before created"},
		{"a claim twice", header + good + "code,ok,2026-12-01T08:01:00Z,\n", `line 3: claim "ok" of pool code appears again (first on line 2)`},
		{"json not an object", `{"claim":"c1","created":"2026-12-01T08:00:00Z"}` + "\n[1]\n", "line 2: not a claim object"},
		{"json unknown field", `{"claim":"c1","created":"2026-12-01T08:00:00Z","owner":"x"}` + "\n", `line 1: not a claim object: json: unknown field "owner"`},
		{"json two objects", `{"claim":"c1","created":"2026-12-01T08:00:00Z"} {"claim":"c2"}` + "\n", "line 1: more than one object"},
		{"json bad time", `{"claim":"c1","created":"2026-12-01T08:00:00Z"}` + "\n" + `{"claim":"c2","created":"8am"}` + "\n", `line 2: created "8am"`},
	} {
		h, err := Read(strings.NewReader(c.text), "h")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
			assert.True(t, strings.HasPrefix(err.Error(), "h: "), "%s: the message names the source: %v", c.name, err)
		}
		assert.Nil(t, h, "%s: nothing half-read", c.name)
	}
}

// Several bad rows are all named, up to five, and the rest counted.
func TestReadNamesEveryBadRow(t *testing.T) {
	text := "claim,created,deleted\n"
	for i := 0; i < 7; i++ {
		text += "c,bad,\n"
	}
	_, err := Read(strings.NewReader(text), "h")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2: created")
	assert.Contains(t, err.Error(), `line 3: claim "c" of pool default appears again`)
	assert.Contains(t, err.Error(), "(8 more)") // seven bad times, six of them also a repeated claim
}

// endless is an input that never ends, counting what was read from it.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// Input that is no history is refused at once, with what it is and where, and without being held:
// a file of NUL bytes, and one endless line of text.
func TestReadRefusesWhatIsNotTextBeforeHoldingIt(t *testing.T) {
	for _, c := range []struct {
		name string
		in   *endless
		want string
	}{
		{"NUL bytes", &endless{b: 0}, "line 1: a NUL byte: this is not a text file"},
		{"one endless line", &endless{b: 'a'}, "line 1: longer than 64 KiB, which no row of a history is"},
	} {
		h, err := Read(c.in, "h")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
		assert.Nil(t, h, c.name)
		assert.Less(t, c.in.read, 1<<20, "%s: read %d bytes before refusing", c.name, c.in.read)
	}
	_, err := Read(strings.NewReader("claim,created,deleted\nc1,2026-12-01T08:00:00Z,\x00\n"), "h")
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "line 2: a NUL byte at column 25")
	}
}

// A row that would turn the replay into years is refused naming its line: a claim held longer
// than the bound, a time outside this century, a history longer than the bound.
func TestReadRefusesAbsurdRows(t *testing.T) {
	const header = "pool,claim,created,deleted\n"
	const good = "code,ok,2026-12-01T08:00:00Z,2026-12-01T08:00:30Z\n"
	for _, c := range []struct{ name, text, want string }{
		{"a claim held ten years", header + good + "code,c1,2016-12-01T08:00:00Z,2026-12-01T08:00:00Z\n",
			`line 3: claim "c1" was held 87648h0m0s, longer than the longest a claim may be (24h0m0s)`},
		{"a claim held a day and a second", header + good + "code,c1,2026-12-01T08:00:00Z,2026-12-02T08:00:01Z\n",
			"--max-claim-duration"},
		{"deleted in year 9999", header + good + "code,c1,2026-12-01T08:00:00Z,9999-12-31T23:59:59Z\n",
			"line 3: deleted 9999-12-31T23:59:59Z is outside the years 2000 to 2099"},
		{"created in year 1", header + good + "code,c1,0001-01-01T00:00:00Z,\n",
			"line 3: created 0001-01-01T00:00:00Z is outside the years"},
		{"a history of two years", header + good + "code,c1,2028-12-01T08:00:00Z,\n",
			"the history spans 17544h0m0s (line 2's 2026-12-01T08:00:00Z to line 3's 2028-12-01T08:00:00Z), more than the longest a history may (9600h0m0s)"},
	} {
		h, err := Read(strings.NewReader(c.text), "h")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
		assert.Nil(t, h, c.name)
	}
	// The bounds are the caller's: the same ten-year claim is read under a bound above it.
	h, err := ReadLimited(strings.NewReader(header+"code,c1,2016-12-01T08:00:00Z,2026-12-01T08:00:00Z\n"), "h",
		Limits{MaxClaim: 11 * 365 * 24 * time.Hour, MaxSpan: 11 * 365 * 24 * time.Hour})
	require.NoError(t, err)
	assert.Equal(t, 87648*time.Hour, h.Span())
	_, err = ReadLimited(strings.NewReader(header+good), "h", Limits{})
	assert.ErrorContains(t, err, "the longest claim must be above 0")
}

// Bad rows of every kind are named together, not only the first kind met; reading stops after
// maxErrors of them, and says so.
func TestReadNamesBadRowsOfEveryKindAndStopsAtTheCap(t *testing.T) {
	text := "claim,created,deleted\nc1,2026-12-01T08:00:00Z\nc2,noon,\nc3,2026-12-01T08:00:00Z,9999-01-01T00:00:00Z\n"
	_, err := Read(strings.NewReader(text), "h")
	require.Error(t, err)
	for _, want := range []string{"line 2: 2 fields, the header has 3", `line 3: created "noon"`, "line 4: deleted 9999-01-01T00:00:00Z is outside"} {
		assert.Contains(t, err.Error(), want)
	}

	var b strings.Builder
	b.WriteString("claim,created,deleted\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "c%d,bad,\n", i)
	}
	_, err = Read(strings.NewReader(b.String()), "h")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(95 more; reading stopped at the 100th bad row)")
}
