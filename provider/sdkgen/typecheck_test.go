package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
)

// npmPackages are what the TypeScript checks install from npm, exact versions: the compiler, the
// Pulumi SDK the generated code imports, the Kubernetes SDK the example imports, Node's types.
var npmPackages = []string{"typescript@5.9.3", "@pulumi/pulumi@3.248.0", "@pulumi/kubernetes@4.32.0", "@types/node@20.19.43"}

// nodeModules installs npmPackages once into a cache directory outside the repository (keyed by
// the versions) and returns its node_modules.
func nodeModules(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s type-checks the generated TypeScript SDK; install Node.js and npm (apt-get install nodejs npm): %v", tool, err)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	npmDir := filepath.Join(cache, "warm-pool-autoscaling-keda", "npm")
	dir := filepath.Join(npmDir, strings.NewReplacer("@", "", "/", "-").Replace(strings.Join(npmPackages, "_")))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".bin", "tsc")); err == nil {
		return modules
	}
	// Into a scratch directory first, renamed into place whole: a cut-off install is never reused.
	if err := os.MkdirAll(npmDir, 0o755); err != nil {
		t.Fatal(err)
	}
	scratch, err := os.MkdirTemp(npmDir, ".install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	cmd := exec.Command("npm", append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", scratch}, npmPackages...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %v: %v\n%s", npmPackages, err, out)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(scratch, dir); err != nil {
		t.Fatal(err)
	}
	return modules
}

// runTSC runs the compiler on the project in dir (its tsconfig.json) with the given flags.
func runTSC(t *testing.T, dir, modules string, flags ...string) error {
	t.Helper()
	out, err := exec.Command(filepath.Join(modules, ".bin", "tsc"), append(flags, "-p", dir)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// typescriptExample lays examples/typescript out as `pulumi install` and `npm install` leave it:
// its files, the generated SDK in sdks/warmpool (type-checked under its own tsconfig), and
// node_modules with the pinned packages and @warmpool/warmpool linked to sdks/warmpool, as
// package.json's file: dependency links it (the SDK's package.json names no build output, so
// tsc reads its sources). index.ts is written by the caller.
func typescriptExample(t *testing.T, files map[string][]byte, modules string) string {
	t.Helper()
	project := t.TempDir()
	for _, name := range []string{"package.json", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "typescript", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nm := filepath.Join(project, "node_modules")
	if err := os.MkdirAll(filepath.Join(nm, "@warmpool"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(modules)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(modules, e.Name()), filepath.Join(nm, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("..", "..", "sdks", "warmpool"), filepath.Join(nm, "@warmpool", "warmpool")); err != nil {
		t.Fatal(err)
	}
	sdk := filepath.Join(project, "sdks", "warmpool")
	if err := Write(sdk, files); err != nil {
		t.Fatal(err)
	}
	if err := runTSC(t, sdk, modules, "--noEmit"); err != nil {
		t.Fatalf("the generated TypeScript SDK does not type-check: %v", err)
	}
	return project
}

// typescriptMistakes are mistakes a team could make in examples/typescript/index.ts, each made
// once: tsc must refuse every one, naming it, or the SDK's types check nothing.
var typescriptMistakes = []struct{ name, from, to, says string }{
	{"a misspelled nested key", "policy: warmpool.SizingPolicy.Arrivals", "polcy: warmpool.SizingPolicy.Arrivals", "'polcy' does not exist in type"},
	{"a misspelled key two levels down", "requests: {", "requestz: {", "'requestz' does not exist in type"},
	{"text for a number", "bootSeconds: 8", `bootSeconds: "8"`, "Type 'string' is not assignable to type 'Input<number"},
	{"a value outside an enum", "isolation: warmpool.Isolation.Vm", `isolation: "kvm"`, `Type '"kvm"' is not assignable`},
	{"a misspelled input", "minReplicas: 1,", "minReplica: 1,", "'minReplica' does not exist in type"},
}

// TestTheTypeScriptSDKAndTheExampleTypeCheck: the SDK `pulumi install` generates for a
// TypeScript stack builds under its own tsconfig, examples/typescript type-checks against it
// under the example's own tsconfig and package.json, and each of typescriptMistakes fails it.
func TestTheTypeScriptSDKAndTheExampleTypeCheck(t *testing.T) {
	files, err := Generate(schemaJSON(t), "nodejs")
	if err != nil {
		t.Fatal(err)
	}
	modules := nodeModules(t)
	project := typescriptExample(t, files, modules)
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "typescript", "index.ts"))
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(project, "index.ts")
	if err := os.WriteFile(index, example, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runTSC(t, project, modules, "--noEmit"); err != nil {
		t.Fatalf("examples/typescript/index.ts does not type-check against the generated SDK: %v", err)
	}
	// One compile a mistake: tsc reports one excess property of an object literal, so mistakes
	// made together would hide each other.
	for _, m := range typescriptMistakes {
		t.Run(m.name, func(t *testing.T) {
			broken := strings.Replace(string(example), m.from, m.to, 1)
			if broken == string(example) {
				t.Fatalf("examples/typescript/index.ts has no %q to break", m.from)
			}
			if err := os.WriteFile(index, []byte(broken), 0o644); err != nil {
				t.Fatal(err)
			}
			err := runTSC(t, project, modules, "--noEmit")
			if err == nil {
				t.Fatalf("tsc accepts the example with %s (%q for %q)", m.name, m.to, m.from)
			}
			if !strings.Contains(err.Error(), m.says) {
				t.Fatalf("tsc refuses the example with %s, but does not say %q: %v", m.name, m.says, err)
			}
		})
	}
}

// TestTheTypeScriptExampleInstallsWhatTheTestsCheck: examples/typescript/package.json asks for
// the versions the type checks install (npmPackages) and links the SDK `pulumi install`
// generates, so `npm install` there gives what passed here.
func TestTheTypeScriptExampleInstallsWhatTheTestsCheck(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "typescript", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies, DevDependencies map[string]string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("examples/typescript/package.json: %v", err)
	}
	want := map[string]string{"@warmpool/warmpool": "file:sdks/warmpool"}
	for _, p := range npmPackages {
		at := strings.LastIndex(p, "@")
		want[p[:at]] = p[at+1:]
	}
	got := map[string]string{}
	maps.Copy(got, pkg.Dependencies)
	maps.Copy(got, pkg.DevDependencies)
	if !maps.Equal(got, want) {
		t.Fatalf("examples/typescript/package.json asks for %v; the type checks install %v", got, want)
	}
}

// pythonKeywords fails unless every keyword the example passes to a class of the SDK, imported
// as warmpool (warmpool.AutoscaledWarmPool(...), warmpool.SizingArgs(...)), is a parameter of that class's
// __init__, and at least one class is called with one (ast only: no Python package index here,
// so the Pulumi Python SDK cannot be installed to import it).
const pythonKeywords = `
import ast, pathlib, sys
sdk, example = pathlib.Path(sys.argv[1]), sys.argv[2]
params = {}
for f in sdk.rglob("*.py"):
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ClassDef):
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                    params.setdefault(node.name, set()).update(a.arg for a in fn.args.args + fn.args.kwonlyargs)
calls = [n for n in ast.walk(ast.parse(open(example).read()))
         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
         and n.func.value.id == "warmpool" and n.func.attr in params]
unknown = ["%s(%s=...)" % (c.func.attr, k.arg) for c in calls for k in c.keywords if k.arg not in params[c.func.attr]]
if "AutoscaledWarmPool" not in {c.func.attr for c in calls} or unknown:
    sys.exit("calls of the SDK's classes %s; keywords none of them takes: %s" % (sorted({c.func.attr for c in calls}), unknown))
print("%d keywords in %d calls, each a parameter of its class" % (sum(len(c.keywords) for c in calls), len(calls)))
`

// pythonMistakes are mistakes in examples/python/__main__.py that the keyword check must refuse.
var pythonMistakes = []struct{ name, from, to string }{
	{"a misspelled nested keyword", "boot_seconds=", "boot_secnds="},
	{"a misspelled input", "min_replicas=", "min_replica="},
}

// TestThePythonSDKAndTheExampleCompile: the generated Python SDK compiles, and
// examples/python/__main__.py compiles and passes only keywords its classes take (a misspelled
// one, nested or not, fails: pythonMistakes).
func TestThePythonSDKAndTheExampleCompile(t *testing.T) {
	files, err := Generate(schemaJSON(t), "python")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 checks the Python example; install it (apt-get install python3): %v", err)
	}
	var sources []string
	for name := range files {
		if strings.HasSuffix(name, ".py") {
			sources = append(sources, filepath.Join(dir, name))
		}
	}
	if out, err := exec.Command(python, append([]string{"-m", "py_compile"}, sources...)...).CombinedOutput(); err != nil {
		t.Errorf("the generated Python SDK does not compile: %v\n%s", err, out)
	}
	example := filepath.Join("..", "..", "examples", "python", "__main__.py")
	// compile(), not py_compile: nothing is written beside the example.
	if out, err := exec.Command(python, "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')", example).CombinedOutput(); err != nil {
		t.Fatalf("examples/python/__main__.py does not compile: %v\n%s", err, out)
	}
	sdk := filepath.Join(dir, "pulumi_warmpool")
	out, err := exec.Command(python, "-c", pythonKeywords, sdk, example).CombinedOutput()
	if err != nil {
		t.Fatalf("examples/python/__main__.py against the generated SDK: %v\n%s", err, out)
	}
	t.Logf("examples/python: %s", out)
	good, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pythonMistakes {
		broken := strings.Replace(string(good), m.from, m.to, 1)
		if broken == string(good) {
			t.Fatalf("examples/python/__main__.py has no %q to break", m.from)
		}
		mistaken := filepath.Join(t.TempDir(), "__main__.py")
		if err := os.WriteFile(mistaken, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, "-c", pythonKeywords, sdk, mistaken).CombinedOutput()
		if err == nil || !strings.Contains(string(out), strings.TrimSuffix(m.to, "=")) {
			t.Errorf("the keyword check does not refuse %s (%q): %v\n%s", m.name, m.to, err, out)
		}
	}
}

// TestThePythonExampleInstallsTheGeneratedSDK: examples/python/requirements.txt installs the SDK
// `pulumi install` generates into sdks/warmpool, and the Pulumi SDK that SDK asks for.
func TestThePythonExampleInstallsTheGeneratedSDK(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "python", "requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines[l] = true
		}
	}
	var spec struct {
		Language struct {
			Python struct{ Requires map[string]string }
		}
	}
	if err := json.Unmarshal(schemaJSON(t), &spec); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"./sdks/warmpool", "pulumi" + spec.Language.Python.Requires["pulumi"]} {
		if !lines[want] {
			t.Errorf("examples/python/requirements.txt has no line %q (it has %v)", want, slices.Sorted(maps.Keys(lines)))
		}
	}
}

// TestTheExamplesNameThePackage: each example run by the CLI names the package in Pulumi.yaml's
// packages, from this checkout's provider/, so `pulumi install` builds its plugin and SDK.
func TestTheExamplesNameThePackage(t *testing.T) {
	for _, lang := range []string{"yaml", "typescript", "python"} {
		dir := filepath.Join("..", "..", "examples", lang)
		proj, err := workspace.LoadProject(filepath.Join(dir, "Pulumi.yaml"))
		if err != nil {
			t.Fatalf("examples/%s/Pulumi.yaml: %v", lang, err)
		}
		pkg, ok := proj.GetPackageSpecs()["warmpool"]
		if !ok {
			t.Errorf("examples/%s/Pulumi.yaml has no packages entry warmpool", lang)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, pkg.Source, "PulumiPlugin.yaml")); err != nil {
			t.Errorf("examples/%s/Pulumi.yaml's packages.warmpool is %q, which is not the package's folder: %v", lang, pkg.Source, err)
		}
	}
}
