// Package livetests tells, from the source, which tests need the upstream tools (a local control
// plane, or a tool the cache builds) and holds them to the naming rule `./test` runs by: such a
// test is named TestLive..., and a test so named needs them. `./test` runs `-skip '^TestLive'` in
// its fast phase and `-run '^TestLive'` in the live one, so a test that broke the rule would run in
// the wrong phase: the fast phase would build every tool, or a live test would never run.
package livetests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Prefix starts the name of every test that needs the upstream tools.
const Prefix = "TestLive"

// starters are the calls that start a control plane or build an upstream tool: package name ->
// function names. Start inside package localcluster itself is the same as localcluster.Start.
var starters = map[string][]string{
	"localcluster": {"Start"},
	"framework":    {"StartCluster"},
	"toolcache":    {"Ensure"},
}

// Test is one test function of the module.
type Test struct {
	Dir  string // the package's directory, relative to the module root
	Name string
	// Starts: the test reaches a starter through the functions of its own package, by Via (the
	// test, then each function it reaches, the last one calling the starter).
	Starts bool
	Via    []string
}

// Misnamed says why t breaks the rule, or "" when it keeps it.
func (t Test) Misnamed() string {
	live := strings.HasPrefix(t.Name, Prefix)
	switch {
	case t.Starts && !live:
		return fmt.Sprintf("%s/%s starts a control plane or builds an upstream tool (through %s) but is not named %s...: ./test would run it in the fast phase", t.Dir, t.Name, strings.Join(t.Via, " -> "), Prefix)
	case !t.Starts && live:
		return fmt.Sprintf("%s/%s is named %s... but starts no control plane and builds no tool: name it without the prefix so it runs in the fast phase", t.Dir, t.Name, Prefix)
	}
	return ""
}

// Find parses every Go file under root (skipping testdata and hidden directories) and returns
// every Test function, each with whether it reaches a starter.
func Find(root string) ([]Test, error) {
	var tests []Test
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		found, err := findInDir(root, path)
		tests = append(tests, found...)
		return err
	})
	sort.Slice(tests, func(i, j int) bool {
		return tests[i].Dir+"/"+tests[i].Name < tests[j].Dir+"/"+tests[j].Name
	})
	return tests, err
}

// findInDir reads one directory's Go files (the package and its external test package share
// their helpers' names here: an over-approximation that can only call a test live, not miss one).
func findInDir(root, dir string) ([]Test, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	// uses: a function's name, or a method's as ".name" -> the names its bodies refer to, bare
	// (functions) or selected (".name": methods). Methods of different types with one name are
	// merged, and a local variable named like a function counts as a use of it: the graph can only
	// have too many edges, so a live test is never missed.
	uses := map[string]map[string]bool{}
	starts := map[string]bool{}
	var testNames []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			// Functions and methods are apart: x.Start() can reach a method Start, never the
			// package's function Start.
			name := fn.Name.Name
			if fn.Recv != nil {
				name = "." + name
			}
			if fn.Recv == nil && strings.HasPrefix(name, "Test") && strings.HasSuffix(e.Name(), "_test.go") && isTestSignature(fn) {
				testNames = append(testNames, name)
			}
			if uses[name] == nil {
				uses[name] = map[string]bool{}
			}
			// A starter is called as pkg.Fn, or as a bare Fn inside its own package (a selector
			// x.Start is a method or a field, never the package's function).
			selected := map[*ast.Ident]bool{} // the names after a dot: methods or fields
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if id, ok := x.Fun.(*ast.Ident); ok && isStarter(f.Name.Name, id.Name) {
						starts[name] = true
					}
				case *ast.SelectorExpr:
					if pkg, ok := x.X.(*ast.Ident); ok && isStarter(pkg.Name, x.Sel.Name) {
						starts[name] = true
					}
					uses[name]["."+x.Sel.Name] = true
					selected[x.Sel] = true
				case *ast.Ident:
					if !selected[x] {
						uses[name][x.Name] = true
					}
				}
				return true
			})
		}
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	var tests []Test
	for _, n := range testNames {
		via := reaches(n, uses, starts)
		tests = append(tests, Test{Dir: filepath.ToSlash(rel), Name: n, Starts: via != nil, Via: via})
	}
	return tests, nil
}

// reaches: from fn, following the names each body refers to, is a starter called? It returns
// the chain of functions from fn to the one that calls it (nil: none).
func reaches(fn string, uses map[string]map[string]bool, starts map[string]bool) []string {
	from := map[string]string{fn: ""}
	next := []string{fn}
	for len(next) > 0 {
		n := next[0]
		next = next[1:]
		if starts[n] {
			var chain []string
			for at := n; at != ""; at = from[at] {
				chain = append([]string{at}, chain...)
			}
			return chain
		}
		for used := range uses[n] {
			if _, declared := uses[used]; declared {
				if _, seen := from[used]; !seen {
					from[used] = n
					next = append(next, used)
				}
			}
		}
	}
	return nil
}

func isStarter(pkg, fn string) bool {
	for _, s := range starters[pkg] {
		if s == fn {
			return true
		}
	}
	return false
}

// isTestSignature: func TestX(t *testing.T).
func isTestSignature(fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if len(params) != 1 || fn.Type.Results != nil {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}
