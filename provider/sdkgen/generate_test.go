package main

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func schemaJSON(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTheSchemaBindsAndABrokenOneDoesNot(t *testing.T) {
	good := schemaJSON(t)
	pkg, err := Bind(good)
	if err != nil {
		t.Fatalf("the package schema does not bind: %v", err)
	}
	if len(pkg.Resources) != 1 || pkg.Resources[0].Token != "warmpool:index:AutoscaledWarmPool" || !pkg.Resources[0].IsComponent {
		t.Fatalf("the schema binds to %d resources, want the one component warmpool:index:AutoscaledWarmPool", len(pkg.Resources))
	}
	for name, broken := range map[string][]byte{
		"an input of no known type": bytes.Replace(good, []byte(`"type": "integer"`), []byte(`"type": "int"`), 1),
		"a reference to nothing":    bytes.Replace(good, []byte(`pulumi.json#/Any`), []byte(`#/types/warmpool:index:Nothing`), 1),
	} {
		if bytes.Equal(broken, good) {
			t.Fatalf("%s: the schema has nothing to break", name)
		}
		if _, err := Bind(broken); err == nil {
			t.Errorf("%s: the schema still binds", name)
		}
	}
}

// TestTheCommittedGoSDKIsWhatTheSchemaGenerates: sdk/go (which the program's module builds, and
// a Go stack imports) is regenerated after every schema change:
//
//	cd provider/sdkgen && go run . --out ../../sdk --language go
func TestTheCommittedGoSDKIsWhatTheSchemaGenerates(t *testing.T) {
	files, err := Generate(schemaJSON(t), "go")
	if err != nil {
		t.Fatal(err)
	}
	committed := map[string][]byte{}
	root := filepath.Join("..", "..", "sdk", "go")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		committed[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(committed)), slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Fatalf("sdk/go holds %v, the generator writes %v; regenerate it", got, want)
	}
	for name, want := range files {
		if !bytes.Equal(committed[name], want) {
			t.Errorf("sdk/go/%s is not what the schema generates; regenerate it (cd provider/sdkgen && go run . --out ../../sdk --language go)", name)
		}
	}
}

// TestTheTypeScriptAndPythonSDKsGenerate: the SDKs `pulumi package add` makes for a TypeScript
// or Python stack, from this schema with the same generators (typecheck_test.go compiles them).
func TestTheTypeScriptAndPythonSDKsGenerate(t *testing.T) {
	for lang, want := range map[string]map[string][]string{
		"nodejs": {
			"autoscaledWarmPool.ts": {"export class AutoscaledWarmPool extends pulumi.ComponentResource", "warmpool:index:AutoscaledWarmPool", "minReplicas?: number", "pools?: inputs.PoolArgs[];", "sizing?: inputs.SizingArgs;", "kedaMode?: enums.KedaMode;"},
			"types/input.ts":        {"export interface SizingArgs {", "policy?: pulumi.Input<enums.SizingPolicy"},
		},
		"python": {
			"pulumi_warmpool/autoscaled_warm_pool.py": {"class AutoscaledWarmPool(pulumi.ComponentResource)", "warmpool:index:AutoscaledWarmPool", "min_replicas: Optional[_builtins.int] = None", "sizing: Optional['SizingArgs'] = None"},
			"pulumi_warmpool/_inputs.py":              {"class SizingArgs:", "class PoolArgs:"},
		},
	} {
		files, err := Generate(schemaJSON(t), lang)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		for file, lines := range want {
			src, ok := files[file]
			if !ok {
				t.Errorf("%s: no %s among %v", lang, file, slices.Sorted(maps.Keys(files)))
				continue
			}
			for _, line := range lines {
				if !strings.Contains(string(src), line) {
					t.Errorf("%s: %s does not say %q", lang, file, line)
				}
			}
		}
	}
}
