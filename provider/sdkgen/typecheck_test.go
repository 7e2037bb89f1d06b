package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// tsc type-checks the project in dir (its tsconfig.json) with the cached node_modules.
func tsc(t *testing.T, dir, modules string) error {
	t.Helper()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(modules, ".bin", "tsc"), "--noEmit", "-p", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// TestTheTypeScriptSDKAndTheExampleTypeCheck: the SDK `pulumi package add` generates for a
// TypeScript stack compiles under its own tsconfig, and examples/typescript/index.ts type-checks
// against it (its inputs' names and types), as the SDK sits in sdks/warmpool.
func TestTheTypeScriptSDKAndTheExampleTypeCheck(t *testing.T) {
	files, err := Generate(schemaJSON(t), "nodejs")
	if err != nil {
		t.Fatal(err)
	}
	modules := nodeModules(t)
	project := t.TempDir()
	sdk := filepath.Join(project, "sdks", "warmpool")
	if err := Write(sdk, files); err != nil {
		t.Fatal(err)
	}
	if err := tsc(t, sdk, modules); err != nil {
		t.Fatalf("the generated TypeScript SDK does not type-check: %v", err)
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "typescript", "index.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "index.ts"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	tsconfig := `{"compilerOptions": {"target": "ES2022", "module": "commonjs", "moduleResolution": "node", "strict": true,
  "skipLibCheck": true, "types": ["node"], "paths": {"@warmpool/warmpool": ["./sdks/warmpool/index.ts"]}}, "files": ["index.ts"]}`
	if err := os.WriteFile(filepath.Join(project, "tsconfig.json"), []byte(tsconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tsc(t, project, modules); err != nil {
		t.Fatalf("examples/typescript/index.ts does not type-check against the generated SDK: %v", err)
	}
}

// pythonKeywords fails unless every keyword the example passes to AutoscaledWarmPool(...) is a
// parameter of the generated class's __init__ (ast only: no Python package index here, so the
// Pulumi Python SDK cannot be installed to import it).
const pythonKeywords = `
import ast, sys
sdk, example = sys.argv[1], sys.argv[2]
params = set()
for node in ast.walk(ast.parse(open(sdk).read())):
    if isinstance(node, ast.ClassDef) and node.name == "AutoscaledWarmPool":
        for f in node.body:
            if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                params |= {a.arg for a in f.args.args + f.args.kwonlyargs}
calls = [n for n in ast.walk(ast.parse(open(example).read()))
         if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "AutoscaledWarmPool"]
unknown = [k.arg for c in calls for k in c.keywords if k.arg not in params]
if not calls or not params or unknown:
    sys.exit("calls %d, parameters %d, unknown keywords %s" % (len(calls), len(params), unknown))
print("%d keywords, each a parameter of AutoscaledWarmPool" % sum(len(c.keywords) for c in calls))
`

// TestThePythonSDKAndTheExampleCompile: the generated Python SDK compiles, and
// examples/python/__main__.py compiles and passes only inputs its AutoscaledWarmPool takes.
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
	out, err := exec.Command(python, "-c", pythonKeywords, filepath.Join(dir, "pulumi_warmpool", "autoscaled_warm_pool.py"), example).CombinedOutput()
	if err != nil {
		t.Fatalf("examples/python/__main__.py against the generated SDK: %v\n%s", err, out)
	}
	t.Logf("examples/python: %s", out)
}
