package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// secretSignature is the key Pulumi's state marks a secret value with (its "secret sig"): the
// value beside it is the ciphertext, never the value itself.
const secretSignature = "4dabf18193072939515e22adb298388d"

// SecretKeptInState reads a file backend's directory after a run given the secret value clear,
// and says what it shows: an error when any file there (the stack's checkpoint, its history and
// backups) holds clear, or when no resource of type resourceType in the stack's checkpoint holds
// a secret among both its inputs and its outputs (then the value was dropped or never passed,
// and its absence proves nothing). It returns how many such resources it read.
func SecretKeptInState(backendDir, project, stack, clear, resourceType string) (int, error) {
	if len(clear) < 8 {
		return 0, fmt.Errorf("the secret %q is too short to search for: a value that common could match anything", clear)
	}
	var inClear []string
	files := 0
	err := filepath.WalkDir(backendDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(clear)) {
			rel, _ := filepath.Rel(backendDir, path)
			inClear = append(inClear, rel)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading the backend %s: %w", backendDir, err)
	}
	if len(inClear) > 0 {
		return 0, fmt.Errorf("the secret stands in clear in %d of the backend's %d files: %s", len(inClear), files, strings.Join(inClear, ", "))
	}
	checkpoint := filepath.Join(backendDir, ".pulumi", "stacks", project, stack+".json")
	b, err := os.ReadFile(checkpoint)
	if err != nil {
		return 0, fmt.Errorf("the stack's checkpoint: %w", err)
	}
	return secretHeldBy(b, resourceType)
}

// secretHeldBy reads a checkpoint (or a `pulumi stack export`) and counts the resources of type
// resourceType holding a secret among their inputs and among their outputs; none is an error.
func secretHeldBy(checkpoint []byte, resourceType string) (int, error) {
	var state struct {
		Checkpoint struct {
			Latest struct {
				Resources []stateResource `json:"resources"`
			} `json:"latest"`
		} `json:"checkpoint"`
		Deployment struct {
			Resources []stateResource `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal(checkpoint, &state); err != nil {
		return 0, fmt.Errorf("the checkpoint is not a Pulumi state: %w", err)
	}
	resources := append(state.Checkpoint.Latest.Resources, state.Deployment.Resources...)
	seen, held := 0, 0
	for _, r := range resources {
		if r.Type != resourceType {
			continue
		}
		seen++
		if holdsSecret(r.Inputs) && holdsSecret(r.Outputs) {
			held++
		}
	}
	switch {
	case seen == 0:
		return 0, fmt.Errorf("the state holds no %s among its %d resources", resourceType, len(resources))
	case held == 0:
		return 0, fmt.Errorf("none of the state's %d %s holds a secret in both its inputs and its outputs", seen, resourceType)
	}
	return held, nil
}

type stateResource struct {
	Type    string `json:"type"`
	Inputs  any    `json:"inputs"`
	Outputs any    `json:"outputs"`
}

// holdsSecret says whether v, a resource's inputs or outputs as the state keeps them, holds a
// value marked secret (an object whose secret signature key is set).
func holdsSecret(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[secretSignature]; ok {
			return true
		}
		for _, e := range v {
			if holdsSecret(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holdsSecret(e) {
				return true
			}
		}
	}
	return false
}
