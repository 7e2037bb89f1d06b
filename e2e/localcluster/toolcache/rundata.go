package toolcache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// writeProviderSchema does what the provider's generate.go does at release
// time: stamp the version into schema.json and compact both JSON files into
// the names its main package embeds.
func writeProviderSchema(toolDir, moduleDir string) error {
	cmdDir := filepath.Join(moduleDir, "cmd", "pulumi-resource-kubernetes")
	var schema map[string]any
	if err := readJSON(filepath.Join(cmdDir, "schema.json"), &schema); err != nil {
		return err
	}
	schema["version"] = ProviderVersion
	var mapping any
	if err := readJSON(filepath.Join(cmdDir, "terraform-mapping.json"), &mapping); err != nil {
		return err
	}
	for name, v := range map[string]any{"schema-embed.json": schema, "terraform-mapping-embed.json": mapping} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(toolDir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// copyKwokStages gathers the stages of KWOK's "fast" bundle (node
// initialisation, heartbeat with lease, pod ready/complete/delete) into one
// file: the kwok binary has no built-in stages.
func copyKwokStages(moduleDir, dataDir string) error {
	var all bytes.Buffer
	for _, pattern := range []string{"node/fast/*.yaml", "node/heartbeat-with-lease/*.yaml", "pod/fast/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(moduleDir, "kustomize", "stage", pattern))
		if err != nil {
			return err
		}
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			all.WriteString("---\n")
			all.Write(b)
			all.WriteString("\n")
		}
	}
	if all.Len() == 0 {
		return errors.New("no KWOK stages found in the module")
	}
	return os.WriteFile(filepath.Join(dataDir, "kwok-stages.yaml"), all.Bytes(), 0o644)
}

// copyGlobs copies every file of each pattern into one folder of the data dir;
// each pattern must match.
func copyGlobs(into string, patterns ...string) func(moduleDir, dataDir string) error {
	return func(moduleDir, dataDir string) error {
		for _, p := range patterns {
			if err := copyGlob(p, into)(moduleDir, dataDir); err != nil {
				return err
			}
		}
		return nil
	}
}

func copyGlob(pattern, into string) func(moduleDir, dataDir string) error {
	return func(moduleDir, dataDir string) error {
		files, err := filepath.Glob(filepath.Join(moduleDir, pattern))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no files match %s in %s", pattern, moduleDir)
		}
		if err := os.MkdirAll(filepath.Join(dataDir, into), 0o755); err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dataDir, into, filepath.Base(f)), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}
