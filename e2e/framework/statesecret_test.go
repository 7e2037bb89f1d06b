package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	stateTemplateType = "kubernetes:extensions.agents.x-k8s.io/v1beta1:SandboxTemplate"
	stateClear        = "sk-test-0123456789abcdef"
)

// A checkpoint as the file backend writes it: one SandboxTemplate whose env value is env (a JSON
// value), beside a Namespace.
func checkpointWith(env string) string {
	return `{"version":3,"checkpoint":{"stack":"organization/team-sandboxes/dev","latest":{"resources":[
{"urn":"urn:pulumi:dev::team-sandboxes::kubernetes:core/v1:Namespace::ns","type":"kubernetes:core/v1:Namespace","inputs":{},"outputs":{}},
{"urn":"urn:pulumi:dev::team-sandboxes::` + stateTemplateType + `::agent","type":"` + stateTemplateType + `",
 "inputs":{"spec":{"podTemplate":{"spec":{"containers":[{"env":[{"name":"AGENT_API_KEY","value":` + env + `}]}]}}}},
 "outputs":{"spec":{"podTemplate":{"spec":{"containers":[{"env":[{"name":"AGENT_API_KEY","value":` + env + `}]}]}}}}}]}}}`
}

const stateSecret = `{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"v1:abc:def"}`

func writeBackend(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSecretKeptInStateReadsWhatTheBackendHolds(t *testing.T) {
	checkpoint := filepath.Join(".pulumi", "stacks", "team-sandboxes", "dev.json")
	backup := filepath.Join(".pulumi", "backups", "team-sandboxes", "dev", "dev.1.json")
	kept := checkpointWith(stateSecret)
	for _, tc := range []struct {
		name    string
		files   map[string]string
		clear   string
		wantErr string // empty: kept
	}{
		{"encrypted in the template's inputs and outputs", map[string]string{checkpoint: kept, backup: kept}, stateClear, ""},
		{"in clear in the checkpoint", map[string]string{checkpoint: checkpointWith(`"` + stateClear + `"`)}, stateClear,
			"stands in clear in 1 of the backend's 1 files: " + checkpoint},
		{"in clear in a backup only", map[string]string{checkpoint: kept, backup: checkpointWith(`"` + stateClear + `"`)}, stateClear,
			"stands in clear in 1 of the backend's 2 files: " + backup},
		{"no secret held: the value was dropped", map[string]string{checkpoint: checkpointWith(`""`)}, stateClear,
			"none of the state's 1 " + stateTemplateType + " holds a secret"},
		{"no template in the state", map[string]string{checkpoint: strings.ReplaceAll(kept, "SandboxTemplate", "SandboxWarmPool")}, stateClear,
			"the state holds no " + stateTemplateType + " among its 2 resources"},
		{"no checkpoint", map[string]string{backup: kept}, stateClear, "the stack's checkpoint"},
		{"a value too short to search for", map[string]string{checkpoint: kept}, "abc", "too short to search for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeBackend(t, tc.files)
			n, err := SecretKeptInState(dir, "team-sandboxes", "dev", tc.clear, stateTemplateType)
			if tc.wantErr == "" {
				if err != nil || n != 1 {
					t.Fatalf("SecretKeptInState = %d, %v; want 1 template holding it, no error", n, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("SecretKeptInState = %d, %v; want an error saying %q", n, err, tc.wantErr)
			}
		})
	}
}
