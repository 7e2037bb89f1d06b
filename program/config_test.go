package program

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/warmpool/warm-pool-autoscaling-keda/components"
	"github.com/warmpool/warm-pool-autoscaling-keda/contract"
)

const twoContexts = `apiVersion: v1
kind: Config
contexts:
- name: a
  context: {cluster: c, user: u}
- name: b
  context: {cluster: c, user: u}
current-context: a
`

func TestKubeconfigFromAPathGetsTheChosenContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(twoContexts), 0o600))

	got, err := resolveKubeconfig(path, "")
	require.NoError(t, err)
	assert.Equal(t, twoContexts, got, "without kubeContext the file is taken as it is")

	got, err = resolveKubeconfig(path, "b")
	require.NoError(t, err)
	assert.Contains(t, got, `current-context: "b"`)
	assert.NotContains(t, got, "current-context: a")
	assert.Equal(t, 1, strings.Count(got, "current-context:"))
}

func TestKubeconfigContentsWithoutCurrentContextGetOne(t *testing.T) {
	contents := strings.Replace(twoContexts, "current-context: a\n", "", 1)
	got, err := resolveKubeconfig(contents, "b")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(got, "current-context: \"b\"\n"), got)
}

func TestJSONKubeconfigGetsTheChosenContext(t *testing.T) {
	got, err := resolveKubeconfig(`{"apiVersion":"v1","contexts":[{"name":"a"},{"name":"b"}],"current-context":"a"}`, "b")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &doc))
	assert.Equal(t, "b", doc["current-context"])
}

func TestKubeconfigHomePathIsExpanded(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	require.NoError(t, os.WriteFile(filepath.Join(home, "kc"), []byte(twoContexts), 0o600))
	got, err := resolveKubeconfig("~/kc", "")
	require.NoError(t, err)
	assert.Equal(t, twoContexts, got)
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	c := Config{
		ClusterMode: components.ModeExisting, Kubeconfig: twoContexts, RuntimeClassMode: components.ModeRequire,
		AgentSandboxMode: components.ModeAdopt, AgentSandboxVersion: contract.AgentSandboxRelease, KedaMode: components.ModeAdopt,
		KedaChartVersion: contract.KedaChartVersion, Namespace: contract.DefaultNamespace, PoolName: contract.DefaultPoolName,
		TemplateName: contract.DefaultTemplateName, MinReplicas: 1, MaxReplicas: 3, TargetValue: "1", LoadCap: 3,
		PollingInterval: 15, Isolation: contract.IsolationVM,
	}
	require.NoError(t, c.Validate())
	c.Isolation = contract.IsolationGVisor
	require.NoError(t, c.Validate(), "gvisor is the local control plane's isolation")
	c.Isolation = ""
	require.ErrorContains(t, c.Validate(), `isolation is ""; it must be one of vm, gvisor`)
	c.Isolation = contract.IsolationVM

	c.MinReplicas, c.TargetValue, c.KedaChartVersion = 5, "x", "^2.21"
	err := c.Validate()
	require.Error(t, err)
	for _, want := range []string{"minReplicas (5) is greater than maxReplicas (3)", `targetValue is "x"`, `kedaChartVersion is "^2.21"`} {
		assert.Contains(t, err.Error(), want)
	}
}
