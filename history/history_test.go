package history

import (
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
	assert.Contains(t, err.Error(), "(2 more)")
}
