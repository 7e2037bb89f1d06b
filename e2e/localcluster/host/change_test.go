package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// parsePackage parses this package's Go files, tests included.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// Every kind the code can record is one teardown knows how to undo. The
// constants are read from the source, so a new one is checked without being
// listed here.
func TestEveryHostChangeKindHasItsUndo(t *testing.T) {
	fset, files := parsePackage(t)
	var kinds []string
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if typ, ok := v.Type.(*ast.Ident); ok && typ.Name == "hostChangeKind" {
					for i, name := range v.Names {
						lit, ok := v.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							t.Fatalf("%s: %s is not a string literal: the ledger's kinds are fixed strings", fset.Position(name.Pos()), name.Name)
						}
						kind, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						kinds = append(kinds, kind)
					}
				}
			}
		}
	}
	if len(kinds) == 0 {
		t.Fatal("found no hostChangeKind constant in the package's source")
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] {
			t.Errorf("two constants are the kind %q", k)
		}
		seen[k] = true
		c, ok := hostChanges[hostChangeKind(k)]
		switch {
		case !ok:
			t.Errorf("kind %q has no entry in hostChanges: teardown cannot undo it", k)
		case c.undo == nil:
			t.Errorf("kind %q has no undo", k)
		case c.what == "":
			t.Errorf("kind %q does not say what its args are", k)
		}
	}
	for k := range hostChanges {
		if !seen[string(k)] {
			t.Errorf("hostChanges has %q, which is no hostChangeKind constant", k)
		}
	}
	if !t.Failed() {
		t.Logf("%d kinds, each with its undo", len(kinds))
	}
}

// A literal kind would compile (an untyped string converts), so the type
// alone does not keep call sites to the constants.
func TestTheLedgerIsWrittenWithNamedKinds(t *testing.T) {
	fset, files := parsePackage(t)
	calls := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "record" {
				return true
			}
			calls++
			if _, ok := call.Args[0].(*ast.BasicLit); ok {
				t.Errorf("%s: record with a literal kind: use a hostChangeKind constant", fset.Position(call.Pos()))
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("found no call of record in the package's source")
	}
}

// A ledger written before the kinds were typed (a control plane still
// running, or one killed) is read back, and every entry of it is undoable.
func TestAnOlderLedgerIsStillUnderstood(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	older := strings.Join([]string{
		`{"kind":"nft-tables-before","args":["ip filter","inet firewalld"]}`,
		`{"kind":"link","args":["lcbr0"]}`,
		`{"kind":"route","args":["unreachable","198.18.0.0/15"]}`,
		`{"kind":"iptables-chain","args":["filter","LOCALCLUSTER-FORWARD"]}`,
		`{"kind":"sysctl","args":["net/bridge/bridge-nf-call-iptables","0"]}`,
		`{"kind":"iptables-rule","args":["filter","FORWARD","-j","LOCALCLUSTER-FORWARD"]}`,
		`{"kind":"kube-proxy-rules","args":["/cache/bin/kube-proxy"]}`,
		`{"kind":"ip6tables-chain","args":["filter","KUBE-FIREWALL"]}`,
		`{"kind":"ip6tables-rule","args":["filter","INPUT","-j","KUBE-FIREWALL"]}`,
		`{"kind":"dir","args":["/run/containerd"]}`,
		`{"kind":"shim-sockets","args":["/state/node-0/containerd/state","/state/node-0/containerd.sock"]}`,
		`{"kind":"cgroup","args":["localcluster-node-0"]}`,
	}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(older), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := readHostLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 12 {
		t.Fatalf("read %d entries of 12", len(entries))
	}
	for _, e := range entries {
		if _, ok := hostChanges[e.Kind]; !ok {
			t.Errorf("an older ledger's kind %q is unknown now: its change would be left on the machine", e.Kind)
		}
	}
	// And what record writes now is what those ledgers hold.
	l := &Ledger{path: filepath.Join(t.TempDir(), LedgerFile)}
	if err := l.record(iptablesRule("ip6tables"), "filter", "INPUT", "-j", "KUBE-FIREWALL"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(l.path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"ip6tables-rule","args":["filter","INPUT","-j","KUBE-FIREWALL"]}` + "\n"; string(b) != want {
		t.Fatalf("record wrote %s, want %s", b, want)
	}
}

// A kind this version does not know (a newer version's ledger) is an error
// naming it, never skipped as if undone.
func TestAnUnknownHostChangeIsAnError(t *testing.T) {
	err := undo(hostEntry{Kind: "from-a-newer-version", Args: []string{"x"}}, "")
	if err == nil || !strings.Contains(err.Error(), `"from-a-newer-version"`) {
		t.Fatalf("undo of an unknown kind: %v, want an error naming it", err)
	}
}
