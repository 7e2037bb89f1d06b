package framework

import (
	"strings"
	"testing"
)

// LogWriter sends whole lines to the test log (Pulumi's progress arrives in fragments: a dot per
// tick, which it drops).
type LogWriter struct {
	t   testing.TB
	buf *strings.Builder
}

// NewLogWriter writes to t's log.
func NewLogWriter(t testing.TB) LogWriter { return LogWriter{t: t, buf: &strings.Builder{}} }

func (w LogWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	s := w.buf.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		for _, line := range strings.Split(s[:i], "\n") {
			if strings.TrimSpace(strings.Trim(line, ".")) != "" {
				w.t.Log(line)
			}
		}
		w.buf.Reset()
		w.buf.WriteString(s[i+1:])
	}
	return len(p), nil
}
