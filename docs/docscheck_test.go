package docs

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
)

// The docs check reads every Markdown file of the repository and reports, as file:line and what
// is wrong:
//   - a relative link to a file that does not exist, or an #anchor that is no heading of the
//     document it points into (GitHub's heading slugs);
//   - a picture (![...](path)) that does not exist;
//   - a `go test` whose -run or -bench pattern matches no Test/Example/Fuzz or Benchmark function
//     of the packages it names (only the part before the first '/', as go test matches
//     top-level tests);
//   - a `go run ./X` of the repository whose X does not build or whose `--help` does not exit
//     0, or a flag the document gives it that its `--help` does not list (X is built once per
//     test run and run with --help: the flags a reader gets, wherever the code defines them);
//     for a command with verbs (`localcluster up --real-nodes 1`), that verb's `--help`;
//   - a `go test` or `go run` naming a package of another module than the one it runs in (the
//     go command refuses it): e2e and e2e/localcluster are modules of their own, reached with
//     `go test -C e2e ./bursts` or `cd e2e && go test ./bursts`.
// Commands are read from code: fenced blocks and inline code spans.

// problem is one thing a document says that does not resolve.
type problem struct {
	file string // relative to the repository's root, slash-separated
	line int
	kind string // link, anchor, picture, go test, go run, test name
	what string
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s: %s", p.file, p.line, p.kind, p.what) }

// repo is the repository as the check reads it: its root and what it knows of each directory.
type repo struct {
	root   string
	slugs  map[string]map[string]bool // Markdown file -> its heading anchors
	tests  map[string][]string        // package dir -> its top-level Test/Example/Fuzz/Benchmark funcs
	binDir string                     // where the commands are built
	bins   map[string]binary          // command dir -> its binary
	helps  map[string]usage           // binary and arguments -> what it printed
	named  map[string]bool            // every Test/Benchmark/Fuzz/Example func of the repository, by name (read once)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository's root is not the parent of docs/: %v", err)
	}
	return root
}

// markdownFiles lists the repository's Markdown files: git's tracked ones, or without git every
// *.md below the root outside .git.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.md")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			return files
		}
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func newRepo(t *testing.T, root string) *repo {
	return &repo{root: root, slugs: map[string]map[string]bool{}, tests: map[string][]string{},
		binDir: t.TempDir(), bins: map[string]binary{}, helps: map[string]usage{}}
}

func TestDocumentsResolve(t *testing.T) {
	root := repoRoot(t)
	r := newRepo(t, root)
	files := markdownFiles(t, root)
	if len(files) < 5 {
		t.Fatalf("found %d Markdown files under %s: the check would prove nothing", len(files), root)
	}
	texts := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = string(b)
	}
	r.build(goRunDirs(texts...)) // all at once: Go compiles what they share once
	counts := map[string]int{}
	var problems []problem
	for i, f := range files {
		ps, n := r.check(f, texts[i])
		problems = append(problems, ps...)
		for k, v := range n {
			counts[k] += v
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d documents: %d links, %d pictures, %d go test patterns, %d go run commands (of %d commands built), %d test names checked",
		len(files), counts["link"], counts["picture"], counts["go test"], counts["go run"], len(r.bins), counts["test name"])
	// The check must have something to hold: the repository's documents have all four kinds.
	for _, k := range []string{"link", "picture", "go test", "go run", "test name"} {
		if counts[k] == 0 {
			t.Errorf("no %s found in any document: the check of that kind proves nothing", k)
		}
	}
}

// check returns what one document says that does not resolve, and how many things of each kind
// it checked.
func (r *repo) check(file, text string) ([]problem, map[string]int) {
	counts := map[string]int{}
	var ps []problem
	r.slugs[file] = headingAnchors(text) // the document as given, for its own anchors
	prose, code := splitMarkdown(text)
	for _, l := range findLinks(prose) {
		kind := "link"
		if l.picture {
			kind = "picture"
		}
		counts[kind]++
		if what := r.resolveLink(file, l.target, l.picture); what != "" {
			k := kind
			if strings.HasPrefix(what, "anchor ") {
				k = "anchor"
			}
			ps = append(ps, problem{file, l.line, k, what})
		}
	}
	history := historyLines(text)
	for _, c := range code {
		if name := strings.TrimSpace(c.text); testName.MatchString(name) && !history(c.line) {
			counts["test name"]++
			if !r.testNamed(name) {
				ps = append(ps, problem{file, c.line, "test name", fmt.Sprintf("no test or benchmark of the repository is named %s", name)})
			}
		}
		for _, cmd := range commands(c.text) {
			switch {
			case cmd.isGoTest():
				for _, what := range r.checkGoTest(cmd, counts) {
					ps = append(ps, problem{file, c.line, "go test", what})
				}
			case cmd.isGoRun():
				counts["go run"]++
				for _, what := range r.checkGoRun(cmd) {
					ps = append(ps, problem{file, c.line, "go run", what})
				}
			}
		}
	}
	return ps, counts
}

// testName is an inline code span that is a test's or benchmark's name alone: prose that names one
// must name one that exists (a renamed test leaves such names behind).
var testName = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)[A-Z0-9_][A-Za-z0-9_]*$`)

// historyLines reports whether a line lies in a section headed "History": a dated record names the
// tests as they were then, and says so.
func historyLines(text string) func(line int) bool {
	var from, to []int
	for i, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "## ") {
			continue
		}
		if len(from) > len(to) {
			to = append(to, i+1)
		}
		if strings.TrimSpace(strings.TrimPrefix(l, "## ")) == "History" {
			from = append(from, i+1)
		}
	}
	return func(line int) bool {
		for k, f := range from {
			if line > f && (k >= len(to) || line < to[k]) {
				return true
			}
		}
		return false
	}
}

var testFuncDecl = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)[A-Za-z0-9_]*)\(`)

// testNamed reports whether a _test.go file of the repository declares a top-level func name.
func (r *repo) testNamed(name string) bool {
	if r.named == nil {
		r.named = map[string]bool{}
		_ = filepath.WalkDir(r.root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for _, m := range testFuncDecl.FindAllSubmatch(b, -1) {
				r.named[string(m[1])] = true
			}
			return nil
		})
	}
	return r.named[name]
}

// A codeText is a fenced block's lines or an inline code span, with the line it starts on.
type codeText struct {
	line int
	text string
}

var fence = regexp.MustCompile("^\\s*(```|~~~)")

// splitMarkdown separates a document into its prose (fenced blocks blanked, so line numbers hold)
// and its code: each fenced block's lines (continuations joined) and each inline code span.
// Inline code spans are blanked in the prose so a link inside one is not read as a link.
func splitMarkdown(text string) (string, []codeText) {
	lines := strings.Split(text, "\n")
	var code []codeText
	in := ""
	for i, l := range lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			if in == "" {
				in = m[1]
			} else if m[1] == in {
				in = ""
			}
			lines[i] = ""
			continue
		}
		if in != "" {
			code = append(code, codeText{i + 1, l})
			lines[i] = ""
		}
	}
	// Join a fenced line ending in a backslash with the next.
	var joined []codeText
	for i := 0; i < len(code); i++ {
		c := code[i]
		for strings.HasSuffix(strings.TrimRight(c.text, " "), `\`) && i+1 < len(code) && code[i+1].line == code[i].line+1 {
			c.text = strings.TrimSuffix(strings.TrimRight(c.text, " "), `\`) + " " + code[i+1].text
			i++
		}
		joined = append(joined, c)
	}
	prose := strings.Join(lines, "\n")
	spans, blanked := inlineCode(prose)
	return blanked, append(joined, spans...)
}

// inlineCode finds the inline code spans of prose (a run of backticks to the next run of the same
// length, over line ends), returns them and prose with each span's characters blanked.
func inlineCode(prose string) ([]codeText, string) {
	var spans []codeText
	b := []byte(prose)
	line := 1
	for i := 0; i < len(b); {
		if b[i] == '\n' {
			line++
			i++
			continue
		}
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		open := strings.Repeat("`", n)
		end := -1
		for j := i + n; j < len(b); {
			k := strings.Index(string(b[j:]), open)
			if k < 0 {
				break
			}
			k += j
			if (k+n >= len(b) || b[k+n] != '`') && (k == 0 || b[k-1] != '`') {
				end = k
				break
			}
			j = k + 1
		}
		if end < 0 || strings.Contains(string(b[i:end]), "\n\n") {
			i += n
			continue
		}
		content := strings.ReplaceAll(string(b[i+n:end]), "\n", " ")
		spans = append(spans, codeText{line, content})
		for j := i; j < end+n; j++ {
			if b[j] == '\n' {
				line++
			} else {
				b[j] = ' '
			}
		}
		i = end + n
	}
	return spans, string(b)
}

type link struct {
	line    int
	target  string
	picture bool
}

var linkRE = regexp.MustCompile(`(!?)\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

func findLinks(prose string) []link {
	var out []link
	for i, l := range strings.Split(prose, "\n") {
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			out = append(out, link{i + 1, m[2], m[1] == "!"})
		}
	}
	return out
}

// resolveLink says what is wrong with a link from file to target, or "" when it resolves.
func (r *repo) resolveLink(file, target string, picture bool) string {
	if u := strings.ToLower(target); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "mailto:") {
		return ""
	}
	p, anchor, _ := strings.Cut(target, "#")
	dest := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			return fmt.Sprintf("%q is an absolute path: link relative to the document", target)
		}
		dest = path.Clean(path.Join(path.Dir(file), p))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return fmt.Sprintf("%q leaves the repository", target)
		}
		if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(dest))); err != nil {
			if picture {
				return fmt.Sprintf("picture %q: %s does not exist", target, dest)
			}
			return fmt.Sprintf("%q: %s does not exist", target, dest)
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	slugs, err := r.anchors(dest)
	if err != nil {
		return err.Error()
	}
	if !slugs[anchor] {
		return fmt.Sprintf("anchor %q: no heading of %s has that anchor (headings: %s)", "#"+anchor, dest, keyList(slugs, "#"))
	}
	return ""
}

// keyList is the set's keys, each after prefix, sorted and space-separated ("none" when empty).
func keyList(m map[string]bool, prefix string) string {
	var ks []string
	for k := range m {
		ks = append(ks, prefix+k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, " ")
}

var headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)

// anchors are the anchors GitHub gives a document's headings.
func (r *repo) anchors(file string) (map[string]bool, error) {
	if s, ok := r.slugs[file]; ok {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	s := headingAnchors(string(b))
	r.slugs[file] = s
	return s, nil
}

func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	in := ""
	for _, l := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(l); m != nil {
			if in == "" {
				in = m[1]
			} else if m[1] == in {
				in = ""
			}
			continue
		}
		if in != "" {
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

var mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor for a heading: its text (links reduced to their text), lower case,
// every character but letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens.
func slug(heading string) string {
	heading = mdLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, c := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsMark(c) || c == '-' || c == '_':
			b.WriteRune(c)
		case c == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// command is one shell command read from code: its words, and the directory it runs in
// (relative to the root, after any `cd X &&` before it).
type command struct {
	dir   string
	words []string
}

func (c command) goVerb() (string, int) {
	for i := 0; i+1 < len(c.words); i++ {
		if c.words[i] == "go" {
			return c.words[i+1], i + 2
		}
		if !strings.Contains(c.words[i], "=") { // only VAR=value may come before go
			return "", 0
		}
	}
	return "", 0
}

// goChdir applies a go command's -C DIR (the first flag after the verb, where the go command
// takes it): the command runs in DIR, without the flag.
func goChdir(c command) command {
	_, at := c.goVerb()
	if at == 0 || at >= len(c.words) {
		return c
	}
	var dir string
	n := 0
	switch w := c.words[at]; {
	case (w == "-C" || w == "--C") && at+1 < len(c.words):
		dir, n = c.words[at+1], 2
	case strings.HasPrefix(w, "-C=") || strings.HasPrefix(w, "--C="):
		_, dir, _ = strings.Cut(w, "=")
		n = 1
	default:
		return c
	}
	words := append(append([]string{}, c.words[:at]...), c.words[at+n:]...)
	return command{path.Clean(path.Join(c.dir, dir)), words}
}

func (c command) isGoTest() bool { v, _ := c.goVerb(); return v == "test" }
func (c command) isGoRun() bool  { v, _ := c.goVerb(); return v == "run" }

// commands splits a line of code into commands (at |, &&, ||, ; and a # comment), following
// `cd DIR` into the commands after it.
func commands(line string) []command {
	var out []command
	dir := "."
	var cur []string
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if cur[0] == "cd" && len(cur) == 2 {
			dir = path.Clean(path.Join(dir, cur[1]))
		} else {
			out = append(out, goChdir(command{dir, cur}))
		}
		cur = nil
	}
	for _, w := range shellWords(line) {
		switch {
		case w.op && w.text == "#":
			flush()
			return out
		case w.op:
			flush()
		default:
			cur = append(cur, w.text)
		}
	}
	flush()
	return out
}

type word struct {
	text string
	op   bool // a separator: | || && ; # (a comment), > <
}

// shellWords splits a line as a shell would, enough for documents' commands: quotes kept
// together (and removed), $( ... ) one word, operators apart.
func shellWords(line string) []word {
	var out []word
	var cur strings.Builder
	has := false
	flush := func() {
		if has {
			out = append(out, word{text: cur.String()})
		}
		cur.Reset()
		has = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				cur.WriteString(line[i+1:])
				i = len(line)
			} else {
				cur.WriteString(line[i+1 : i+1+j])
				i += j + 1
			}
			has = true
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			depth := 0
			j := i + 1
			for ; j < len(line); j++ {
				if line[j] == '(' {
					depth++
				} else if line[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			cur.WriteString(line[i:min(j+1, len(line))])
			i = j
			has = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !has:
			flush()
			out = append(out, word{text: "#", op: true})
			return out
		case c == '|' || c == ';' || c == '>' || c == '<' || (c == '&' && i+1 < len(line) && line[i+1] == '&'):
			flush()
			if i+1 < len(line) && line[i+1] == c {
				i++
			}
			out = append(out, word{text: string(c), op: true})
		default:
			cur.WriteByte(c)
			has = true
		}
	}
	flush()
	return out
}

// flagValue reads a flag named name (-name V, -name=V, --name V, --name=V) from args.
func flagValues(args []string, name string) []string {
	var out []string
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		n := strings.TrimLeft(a, "-")
		if n == name && i+1 < len(args) {
			out = append(out, args[i+1])
		} else if v, ok := strings.CutPrefix(n, name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// packageDirs are the package directories a go command names (./x, ./x/..., .), relative to
// the root; none named is the command's directory.
func (r *repo) packageDirs(c command, args []string) []string {
	var dirs []string
	for _, a := range args {
		if a != "." && !strings.HasPrefix(a, "./") && !strings.HasPrefix(a, "../") {
			continue
		}
		if p, ok := strings.CutSuffix(a, "/..."); ok || a == "./..." {
			if a == "./..." {
				p = "."
			}
			base := path.Clean(path.Join(c.dir, p))
			_ = filepath.WalkDir(filepath.Join(r.root, filepath.FromSlash(base)), func(fp string, d fs.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return nil
				}
				if d.Name() == ".git" || d.Name() == "testdata" || (fp != filepath.Join(r.root, filepath.FromSlash(base)) && fileExists(filepath.Join(fp, "go.mod"))) {
					return filepath.SkipDir
				}
				rel, _ := filepath.Rel(r.root, fp)
				dirs = append(dirs, filepath.ToSlash(rel))
				return nil
			})
			continue
		}
		dirs = append(dirs, path.Clean(path.Join(c.dir, a)))
	}
	if len(dirs) == 0 {
		dirs = []string{c.dir}
	}
	return dirs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// checkGoTest holds each -run and -bench pattern of a go test to the functions of its packages.
func (r *repo) checkGoTest(c command, counts map[string]int) []string {
	_, at := c.goVerb()
	args := c.words[at:]
	var out []string
	dirs := r.packageDirs(c, args)
	for _, d := range dirs {
		if what := r.otherModule(c, "test", d); what != "" {
			out = append(out, what)
		}
	}
	for _, flag := range []string{"run", "bench"} {
		for _, pat := range flagValues(args, flag) {
			counts["go test"]++
			if pat == "^$" { // runs nothing, on purpose (benchmarks alone)
				continue
			}
			top := splitRegexp(pat)[0]
			re, err := regexp.Compile(top)
			if err != nil {
				out = append(out, fmt.Sprintf("-%s %q does not compile: %v", flag, pat, err))
				continue
			}
			var funcs []string
			for _, d := range dirs {
				fs, err := r.testFuncs(d)
				if err != nil {
					out = append(out, fmt.Sprintf("-%s %q: package %s: %v", flag, pat, d, err))
					continue
				}
				funcs = append(funcs, fs...)
			}
			matched := false
			for _, f := range funcs {
				isBench := strings.HasPrefix(f, "Benchmark")
				if (flag == "bench") == isBench && re.MatchString(f) {
					matched = true
					break
				}
			}
			if !matched {
				kind := "Test, Example or Fuzz function"
				if flag == "bench" {
					kind = "Benchmark"
				}
				out = append(out, fmt.Sprintf("-%s %q matches no %s in %s", flag, pat, kind, strings.Join(dirs, " ")))
			}
		}
	}
	return out
}

// splitRegexp splits a -run or -bench pattern at each '/' outside brackets and parentheses, as
// go test does: the first part matches top-level tests.
func splitRegexp(s string) []string {
	var parts []string
	cs, ps := 0, 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs > 0 {
				cs--
			}
		case '(':
			if cs == 0 {
				ps++
			}
		case ')':
			if cs == 0 && ps > 0 {
				ps--
			}
		case '\\':
			i++
		case '/':
			if cs == 0 && ps == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

var testFuncRE = regexp.MustCompile(`^(Test|Benchmark|Example|Fuzz)`)

// testFuncs are a package directory's top-level Test, Benchmark, Example and Fuzz functions.
func (r *repo) testFuncs(dir string) ([]string, error) {
	if fs, ok := r.tests[dir]; ok {
		return fs, nil
	}
	matches, err := filepath.Glob(filepath.Join(r.root, filepath.FromSlash(dir), "*_test.go"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(dir))); err != nil {
		return nil, fmt.Errorf("no such directory")
	}
	var funcs []string
	fset := token.NewFileSet()
	for _, m := range matches {
		f, err := parser.ParseFile(fset, m, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testFuncRE.MatchString(fd.Name.Name) {
				funcs = append(funcs, fd.Name.Name)
			}
		}
	}
	r.tests[dir] = funcs
	return funcs, nil
}

// goRunTarget reads a `go run` of one of the repository's packages: the package as the document
// writes it, its directory relative to the root and the arguments after it. ok is false for
// anything else (a file, or a package named by import path).
func goRunTarget(c command) (pkg, dir string, args []string, ok bool) {
	_, at := c.goVerb()
	words := c.words[at:]
	i := 0
	for i < len(words) && strings.HasPrefix(words[i], "-") { // go run's own build flags
		i++
	}
	if i >= len(words) {
		return "", "", nil, false
	}
	pkg = words[i]
	if pkg != "." && !strings.HasPrefix(pkg, "./") && !strings.HasPrefix(pkg, "../") {
		return "", "", nil, false
	}
	return pkg, path.Clean(path.Join(c.dir, pkg)), words[i+1:], true
}

// goRunDirs are the directories of the packages the documents' `go run` commands name, so all
// can be built before the check needs the first.
func goRunDirs(texts ...string) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, text := range texts {
		_, code := splitMarkdown(text)
		for _, c := range code {
			for _, cmd := range commands(c.text) {
				if !cmd.isGoRun() {
					continue
				}
				if _, dir, _, ok := goRunTarget(cmd); ok && !seen[dir] {
					seen[dir] = true
					dirs = append(dirs, dir)
				}
			}
		}
	}
	return dirs
}

// binary is a command's executable, or why there is none.
type binary struct {
	path string
	err  error
}

var moduleRE = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// module finds the module a package directory belongs to: the nearest go.mod at or above it
// (provider/sdkgen is a module of its own), its directory and its path.
func (r *repo) module(dir string) (string, string, error) {
	if dir == ".." || strings.HasPrefix(dir, "../") {
		return "", "", fmt.Errorf("%s leaves the repository", dir)
	}
	for d := dir; ; d = path.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(d), "go.mod")); err == nil {
			m := moduleRE.FindSubmatch(b)
			if m == nil {
				return "", "", fmt.Errorf("%s/go.mod names no module", d)
			}
			return d, string(m[1]), nil
		}
		if d == "." {
			return "", "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}

// otherModule says why a go command run in c's directory cannot name the package in dir: dir
// is in another module (the go command names only its own module's packages). "" when it can.
func (r *repo) otherModule(c command, verb, dir string) string {
	here, _, err := r.module(c.dir)
	if err != nil {
		return ""
	}
	there, _, err := r.module(dir)
	if err != nil || there == here {
		return ""
	}
	return fmt.Sprintf("%s is in the module at %s, not in the one at %s where the command runs: go %s -C %s ./%s",
		dir, there, here, verb, there, relTo(there, dir))
}

// build builds the commands in dirs not built yet: one go build per module, so Go compiles what
// they share once (go build cannot build another module's packages), and into a directory of
// its own for each name (go build names a binary after its package's last path element). A
// command whose binary is then missing is built alone, to tell which failed and why.
func (r *repo) build(dirs []string) {
	type job struct {
		module string            // its directory
		dirs   []string          // its packages' directories
		names  map[string]string // package directory -> binary name
		taken  map[string]bool   // binary names
	}
	var jobs []*job
	for _, d := range dirs {
		if _, ok := r.bins[d]; ok {
			continue
		}
		mod, modPath, err := r.module(d)
		if err != nil {
			r.bins[d] = binary{err: err}
			continue
		}
		name := path.Base(path.Join(modPath, relTo(mod, d)))
		var j *job
		for _, k := range jobs {
			if k.module == mod && !k.taken[name] {
				j = k
				break
			}
		}
		if j == nil {
			j = &job{module: mod, names: map[string]string{}, taken: map[string]bool{}}
			jobs = append(jobs, j)
		}
		j.dirs = append(j.dirs, d)
		j.names[d], j.taken[name] = name, true
	}
	for _, j := range jobs {
		out, err := r.goBuild(j.module, j.dirs)
		for _, d := range j.dirs {
			p := filepath.Join(out, j.names[d])
			if err != nil && !fileExists(p) {
				alone, err := r.goBuild(j.module, []string{d})
				if err != nil {
					r.bins[d] = binary{err: err}
					continue
				}
				p = filepath.Join(alone, j.names[d])
			}
			if !fileExists(p) {
				r.bins[d] = binary{err: fmt.Errorf("go build wrote no command: %s is no main package", d)}
				continue
			}
			r.bins[d] = binary{path: p}
		}
	}
}

// relTo is a directory relative to the module directory it is in, both relative to the root.
func relTo(module, dir string) string {
	switch module {
	case ".":
		return dir
	case dir:
		return "."
	}
	return strings.TrimPrefix(dir, module+"/")
}

// goBuild runs go build in a module's directory for package directories of it, into a new
// directory, and returns that directory.
func (r *repo) goBuild(module string, dirs []string) (string, error) {
	out, err := os.MkdirTemp(r.binDir, "build")
	if err != nil {
		return "", err
	}
	args := []string{"build", "-o", out + string(filepath.Separator)}
	for _, d := range dirs {
		args = append(args, "./"+relTo(module, d)) // "./." is the module's own directory
	}
	// Generous: with a cold cache this compiles the Kubernetes and Pulumi SDKs.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = filepath.Join(r.root, filepath.FromSlash(module))
	if b, err := cmd.CombinedOutput(); err != nil {
		return out, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(b)))
	}
	return out, nil
}

// usage is what a command printed for --help, with the flags it lists.
type usage struct {
	out   string // stdout and stderr
	flags map[string]bool
	err   error // it did not run, or exited non-zero
}

// usageFlagRE is a flag line of the flag package's PrintDefaults: two spaces, -name, then its
// type, a tab or the line's end. Exactly two spaces: an example in the usage text, indented
// further (checkpins has one), is no flag line.
var usageFlagRE = regexp.MustCompile(`(?m)^  -([^-\s=][^\s=]*)(?:[ \t]|$)`)

// help runs a binary with args (ending in --help), once per test run.
func (r *repo) help(bin string, args ...string) usage {
	key := strings.Join(append([]string{bin}, args...), "\x00")
	if u, ok := r.helps[key]; ok {
		return u
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.root
	cmd.WaitDelay = 5 * time.Second // a child the command leaves holding its output does not hold the test
	b, err := cmd.CombinedOutput()
	u := usage{out: string(b), flags: map[string]bool{}, err: err}
	for _, m := range usageFlagRE.FindAllStringSubmatch(u.out, -1) {
		u.flags[m[1]] = true
	}
	r.helps[key] = u
	return u
}

// helpWords are the words of a usage text (letters, digits, '-' and '_').
func helpWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && c != '_'
	}) {
		out[w] = true
	}
	return out
}

// checkGoRun holds a `go run ./dir` of this repository to the command's --help: the command
// must build, its --help must exit 0, and every flag the document gives it must be one its
// --help lists.
func (r *repo) checkGoRun(c command) []string {
	pkg, dir, args, ok := goRunTarget(c)
	if !ok {
		return nil
	}
	if what := r.otherModule(c, "run", dir); what != "" {
		return []string{fmt.Sprintf("go run %s: %s", pkg, what)}
	}
	r.build([]string{dir})
	b := r.bins[dir]
	name := "go run " + pkg
	if b.err != nil {
		return []string{fmt.Sprintf("%s: does not build: %v", name, b.err)}
	}
	u := r.help(b.path, "--help")
	// A verb (localcluster's up, down, build...) is the first argument when the top-level
	// --help names it (localcluster: "usage: localcluster up|env|down|build|prereqs ..."); the
	// verb's own --help then holds its flags. Only the first argument, as localcluster reads
	// os.Args[1]: with no verb first the command is held to its top-level --help, which fails as
	// the command would. A word --help does not name is not tried: the flag package stops at a
	// positional argument, so `<bin> <word> --help` would run a command that takes one.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && helpWords(u.out)[args[0]] {
		name += " " + args[0]
		u = r.help(b.path, args[0], "--help")
		args = args[1:]
	}
	if u.err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(u.out), "\n")
		return []string{fmt.Sprintf("%s --help: %v (it printed: %q)", name, u.err, first)}
	}
	var out []string
	for _, a := range args {
		a = strings.Trim(a, "[]")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if flag == "h" || flag == "help" || u.flags[flag] { // the flag package takes -h unlisted
			continue
		}
		out = append(out, fmt.Sprintf("%s: no flag -%s in its --help (it lists: %s)", name, flag, keyList(u.flags, "-")))
	}
	return out
}

// TestEachKindOfCheckRejects holds each check to a document written to fail it, in a repository
// of its own: so a check that passes everything fails here.
func TestEachKindOfCheckRejects(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		fp := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("pkg/a_test.go", "package pkg\n\nimport \"testing\"\n\nfunc TestReal(t *testing.T) {}\n\nfunc BenchmarkReal(b *testing.B) {}\n")
	// Commands the go run check builds and asks for --help: flags of its own and of a package it
	// imports; one named like it elsewhere (a binary name go build gives both); one with verbs,
	// as localcluster reads them (os.Args[1]; none: usage, exit 2); one that does not compile,
	// one whose --help fails and a package that is no command.
	write("cmd/tool/main.go", "package main\n\nimport (\n\t\"flag\"\n\n\t\"example.com/m/opts\"\n)\n\n"+
		"func main() {\n\tflag.String(\"real\", \"\", \"\")\n\tflag.Int(\"named\", 0, \"\")\n\topts.Add(flag.CommandLine)\n\tflag.Parse()\n}\n")
	write("opts/opts.go", "package opts\n\nimport \"flag\"\n\nfunc Add(fs *flag.FlagSet) { fs.Bool(\"imported\", false, \"\") }\n")
	write("alt/tool/main.go", "package main\n\nimport \"flag\"\n\nfunc main() {\n\tflag.Bool(\"alt\", false, \"\")\n\tflag.Parse()\n}\n")
	write("cmd/verbs/main.go", "package main\n\nimport (\n\t\"flag\"\n\t\"fmt\"\n\t\"os\"\n)\n\n"+
		"func main() {\n\tif len(os.Args) < 2 || (os.Args[1] != \"up\" && os.Args[1] != \"down\") {\n"+
		"\t\tfmt.Fprintln(os.Stderr, \"usage: verbs up|down [--state DIR] [--nodes N]\")\n\t\tos.Exit(2)\n\t}\n"+
		"\tfs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)\n\tfs.String(\"state\", \"\", \"\")\n"+
		"\tif os.Args[1] == \"up\" {\n\t\tfs.Int(\"nodes\", 0, \"\")\n\t}\n\t_ = fs.Parse(os.Args[2:])\n}\n")
	write("cmd/broken/main.go", "package main\n\nfunc main() { undefined() }\n")
	write("cmd/failing/main.go", "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(3) }\n")
	// A module of its own below the root, as e2e and e2e/localcluster are.
	write("nested/go.mod", "module example.com/m/nested\n\ngo 1.26\n")
	write("nested/pkg/b_test.go", "package pkg\n\nimport \"testing\"\n\nfunc TestNested(t *testing.T) {}\n")
	write("nested/cmd/nestedtool/main.go", "package main\n\nimport \"flag\"\n\nfunc main() {\n\tflag.Bool(\"deep\", false, \"\")\n\tflag.Parse()\n}\n")
	write("pic.png", "png")
	write("other.md", "# Other\n\n## The Section: `x` (y)\n")
	r := newRepo(t, root)

	good := "# Doc\n\n## Here\n\n[a](other.md#the-section-x-y) [b](#here) [c](pkg/) ![p](pic.png)\n\n" +
		"```sh\ngo test -run '^TestReal$' ./pkg\ngo test -run '^$' -bench Real/sub ./pkg/...\n" +
		"go run ./cmd/tool --real x -named=1 --imported \\\n  -h\ncd cmd && go run ./tool -real 1\ngo run ./alt/tool --alt\n" +
		"go run ./cmd/verbs up --nodes 1 --state s\ngo run ./cmd/verbs down [--state DIR] extra\n" +
		"go test -C nested -run '^TestNested$' ./pkg\ncd nested && go test -run TestNested ./...\ngo run -C nested ./cmd/nestedtool --deep\n```\n" +
		"And `go test ./pkg -run\nTestReal` in prose, and `TestReal` and `BenchmarkReal` by name.\n"
	cases := []struct{ name, doc, kind, want string }{
		{"a link to a missing file", "[a](missing.md)\n", "link", "missing.md does not exist"},
		{"an anchor no heading has", "[a](other.md#no-such)\n", "anchor", `anchor "#no-such"`},
		{"an anchor into this document", "# Doc\n\n[a](#elsewhere)\n", "anchor", `anchor "#elsewhere"`},
		{"a missing picture", "![p](missing.png)\n", "picture", `picture "missing.png"`},
		{"a test name no test has", "held by `TestRenamedAway`\n", "test name", "no test or benchmark of the repository is named TestRenamedAway"},
		{"a test name outside the history", "## History\n\n`TestRenamedAway` then\n\n## Now\n\n`TestGone`\n", "test name", "is named TestGone"},
		{"a -run matching no test", "`go test -run 'TestRealX$' ./pkg`\n", "go test", `-run "TestRealX$" matches no Test`},
		{"a -run naming a benchmark", "`go test -run BenchmarkReal ./pkg`\n", "go test", "matches no Test"},
		{"a -bench matching no benchmark", "```\ngo test -run '^$' -bench '^BenchmarkOther$' ./pkg/...\n```\n", "go test", "matches no Benchmark"},
		{"a flag --help does not list", "```\ngo run ./cmd/tool -real 1 --unreal 2\n```\n", "go run", "go run ./cmd/tool: no flag -unreal in its --help (it lists: -imported -named -real)"},
		{"a flag of another verb", "`go run ./cmd/verbs down --nodes 1`\n", "go run", "go run ./cmd/verbs down: no flag -nodes"},
		{"no verb first", "`go run ./cmd/verbs --state s up`\n", "go run", `go run ./cmd/verbs --help: exit status 2 (it printed: "usage: verbs up|down`},
		{"a command that does not exist", "`go run ./cmd/none -x`\n", "go run", "go run ./cmd/none: does not build"},
		{"a command that does not compile", "`go run ./cmd/broken`\n", "go run", "go run ./cmd/broken: does not build: exit status 1: "},
		{"a command whose --help fails", "`go run ./cmd/failing --help`\n", "go run", "go run ./cmd/failing --help: exit status 3"},
		{"a package that is no command", "`go run ./opts`\n", "go run", "main package"}, // go's "no main packages to build" alone, the check's own beside commands
		{"a test of another module", "`go test -run TestNested ./nested/pkg`\n", "go test", "nested/pkg is in the module at nested, not in the one at . where the command runs: go test -C nested ./pkg"},
		{"a command of another module", "```\ngo run ./nested/cmd/nestedtool --deep\n```\n", "go run", "go run ./nested/cmd/nestedtool: nested/cmd/nestedtool is in the module at nested"},
	}
	// Built as TestDocumentsResolve builds: all at once, the failures among them.
	docs := []string{good}
	for _, c := range cases {
		docs = append(docs, c.doc)
	}
	r.build(goRunDirs(docs...))
	if ps, _ := r.check("doc.md", good); len(ps) > 0 {
		t.Errorf("a document that resolves was rejected: %v", ps)
	}
	for _, c := range cases {
		ps, _ := r.check("doc.md", c.doc)
		if len(ps) != 1 || ps[0].kind != c.kind || !strings.Contains(ps[0].what, c.want) {
			t.Errorf("%s: got %v, want one %s problem containing %q", c.name, ps, c.kind, c.want)
		}
	}
	if b := r.bins["cmd/broken"]; b.err == nil || !strings.Contains(b.err.Error(), "undefined: undefined") {
		t.Errorf("cmd/broken: got %v, want go build's error", b.err)
	}
	// A problem names its line.
	ps, _ := r.check("doc.md", "line one\n\n[a](missing.md)\n")
	if len(ps) != 1 || ps[0].String() != `doc.md:3: link: "missing.md": missing.md does not exist` {
		t.Errorf("got %v", ps)
	}
}

func TestSlugIsGitHubs(t *testing.T) {
	for in, want := range map[string]string{
		"Faults while claims are held (real node)":           "faults-while-claims-are-held-real-node",
		"The newcomer's first run":                           "the-newcomers-first-run",
		"Sizing: `sizing`":                                   "sizing-sizing",
		"2026-12-05: two lanes, the suite":                   "2026-12-05-two-lanes-the-suite",
		"Before the first `pulumi up`: the pinned downloads": "before-the-first-pulumi-up-the-pinned-downloads",
		"See [docs](x.md) now":                               "see-docs-now",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	a := headingAnchors("# A\n\n## A\n\n```\n# not a heading\n```\n## A\n")
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !a[want] {
			t.Errorf("anchors %v lack %q", a, want)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a fenced block was read as a heading")
	}
}

func TestSplitRegexpIsGoTests(t *testing.T) {
	for in, want := range map[string]string{
		"TestA/sub":    "TestA",
		"^Test[/a]$/x": "^Test[/a]$",
		"(A/B)/c":      "(A/B)",
		`Test\/a/b`:    `Test\/a`,
		"^BenchmarkX$": "^BenchmarkX$",
	} {
		if got := splitRegexp(in)[0]; got != want {
			t.Errorf("splitRegexp(%q)[0] = %q, want %q", in, got, want)
		}
	}
}

func TestShellWords(t *testing.T) {
	got := commands(`A=1 go run ./x -a "$(pulumi config get k)" --b='c d' | tee f && go test -C e2e -run X ./bursts && cd sub && go run --C=m ./y && go test ./... # note -z`)
	var s []string
	for _, c := range got {
		s = append(s, c.dir+": "+strings.Join(c.words, ","))
	}
	want := []string{".: A=1,go,run,./x,-a,$(pulumi config get k),--b=c d", ".: tee,f", "e2e: go,test,-run,X,./bursts", "sub/m: go,run,./y", "sub: go,test,./..."}
	if !bytes.Equal([]byte(strings.Join(s, "\n")), []byte(strings.Join(want, "\n"))) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
}
