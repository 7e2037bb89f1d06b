package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	nodejsgen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	pythongen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Languages are the SDKs the package ships generators for here.
var Languages = []string{"go", "nodejs", "python"}

// tool is what the generated files say generated them.
const tool = "warmpool-sdkgen"

// Bind reads the schema as the engine and the generators do, refusing what they would.
func Bind(schemaJSON []byte) (*schema.Package, error) {
	var spec schema.PackageSpec
	if err := json.Unmarshal(schemaJSON, &spec); err != nil {
		return nil, fmt.Errorf("the schema is not a package spec: %w", err)
	}
	// No other package is referenced (pulumi.json#/Any only), so no plugin is loaded.
	pkg, diags, err := schema.BindSpec(spec, schema.NewNullLoader(), schema.ValidationOptions{})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("the schema does not bind: %v", diags)
	}
	return pkg, nil
}

// Generate is one language's SDK: file path to contents.
func Generate(schemaJSON []byte, language string) (map[string][]byte, error) {
	pkg, err := Bind(schemaJSON)
	if err != nil {
		return nil, err
	}
	switch language {
	case "go":
		return gogen.GeneratePackage(tool, pkg, nil)
	case "nodejs":
		return nodejsgen.GeneratePackage(tool, pkg, nil, nil, false, nil)
	case "python":
		return pythongen.GeneratePackage(tool, pkg, nil, nil)
	}
	return nil, fmt.Errorf("no generator for %q here; the languages are %v", language, Languages)
}

// Write puts files under dir, replacing what a previous run wrote there.
func Write(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
