package program

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

const twoContexts = `apiVersion: v1
kind: Config
contexts:
- name: a
  context: {cluster: c, user: u}
- name: b
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
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
	got, err := resolveKubeconfig(`{"apiVersion":"v1","contexts":[{"name":"a","context":{"cluster":"c"}},{"name":"b","context":{"cluster":"c"}}],`+
		`"clusters":[{"name":"c","cluster":{"server":"https://x"}}],"current-context":"a"}`, "b")
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
		TemplateName: contract.DefaultTemplateName, Isolation: contract.IsolationVM, ExporterReplicas: 2,
		PoolSettings: PoolSettings{MinReplicas: 1, MaxReplicas: 3, TargetValue: "1", LoadCap: 3, PollingInterval: 15},
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

// validConfig is a minimal configuration Validate accepts.
func validConfig() Config {
	return Config{
		ClusterMode: components.ModeExisting, Kubeconfig: twoContexts, RuntimeClassMode: components.ModeRequire,
		AgentSandboxMode: components.ModeInstall, AgentSandboxVersion: contract.AgentSandboxRelease, KedaMode: components.ModeInstall,
		KedaChartVersion: contract.KedaChartVersion, Namespace: contract.DefaultNamespace, PoolName: contract.DefaultPoolName,
		TemplateName: contract.DefaultTemplateName, Isolation: contract.IsolationVM, ExporterReplicas: 2,
		PoolSettings: PoolSettings{MinReplicas: 1, MaxReplicas: 3, TargetValue: "1", LoadCap: 3, PollingInterval: 15},
		// Create mode's endpoint and upgrade policy as LoadConfig's defaults give them.
		EndpointPrivateAccess: true, EndpointPublicAccess: true, UpgradePolicy: components.UpgradePolicyStandard,
		SandboxNodePool: defaultSandboxNodePool, SandboxNodeCPU: defaultSandboxNodeCPU,
	}
}

// Each key's grammar: what a user may write is accepted, a near miss is rejected with the key named.
func TestValidateKeyGrammar(t *testing.T) {
	cases := []struct {
		key    string
		set    func(*Config, string)
		accept []string
		reject []string
	}{
		{"claimSelector", func(c *Config, v string) { c.ClaimSelector = v },
			[]string{"", "app.kubernetes.io/part-of=warm-pool-autoscaling-keda", "a==b", "a!=b", "a", "!a", "tier in (a,b)", "tier notin (a)", "a=b,c!=d,!e", " a = b "},
			[]string{"a in b", "=b", "a=b=c", "a,,b", "a in (b", "a=b c", "-a=b", "a=b!", "app.kubernetes.io/part-of=" + strings.Repeat("x", 64), "a=(b)"}},
		{"kedaChartVersion", func(c *Config, v string) { c.KedaChartVersion = v },
			[]string{"2.21.0", "2.21.1", "2.22.0-rc.1", "2.21.0+build.7", "10.0.0"},
			[]string{"2.x", "2.21.x", "2.21", "v2.21.0", "^2.21.0", "~2.21.0", ">=2.21.0", "2.21.0 ", "02.21.0", "2.21.0-", "*", "latest"}},
		{"agentSandboxVersion", func(c *Config, v string) { c.AgentSandboxVersion = v },
			[]string{"v1.0.10", "v0.5.6", "v1.1.0-rc.2"},
			[]string{"v", "vlatest", "1.0.10", "v1.0", "v1.0.x", "v1.0.10/..", "latest", "v01.0.10", "V1.0.10"}},
		{"targetValue", func(c *Config, v string) { c.TargetValue = v },
			[]string{"1", "0.5", "2.125", "100", "999999999.999"},
			[]string{"NaN", "Inf", "+Inf", "-1", "0", "0.000", "1e3", "0x10", "1_000", "0.0001", "1.", ".5", " 1", "1000000000", ""}},
		{"activationTargetValue", func(c *Config, v string) { c.MinReplicas = 0; c.ActivationTargetValue = v },
			[]string{"", "0", "0.5", "3"},
			[]string{"NaN", "Inf", "-Inf", "-0.5", "1e2", "0.0005", "some"}},
		{"namespace", func(c *Config, v string) { c.Namespace = v },
			[]string{contract.DefaultNamespace, "team-a-pool", "keda-pool", "sandboxes"},
			[]string{"keda", "kube-system", "kube-public", "kube-node-lease", "default", "agent-sandbox-system", "kube-anything", "Warm_Pool"}},
		{"exporterUrl", func(c *Config, v string) { c.ExporterURL = v },
			[]string{"", "http://127.0.0.1:18080/demand", "https://exporter.example.com/demand"},
			[]string{"http://", "https://", "ftp://x/demand", "claim-exporter:8080", "http://user:pw@x/demand", "http://%zz"}},
		{"kubernetesVersion", func(c *Config, v string) {
			c.ClusterMode, c.Kubeconfig, c.ClusterName, c.KubernetesVersion = components.ModeCreate, "", "c", v
		},
			[]string{"1.36", "1.37", "2.0"},
			[]string{"v1.36", "1.36.0", "1.x", "01.36", "latest"}},
		{"exporterImage", func(c *Config, v string) { c.ExporterImage = v },
			[]string{"", "claim-exporter", "registry.example.com/claim-exporter:v1", "warmpool.local/claim-exporter:e2e",
				"123456789012.dkr.ecr.us-west-2.amazonaws.com/team/claim-exporter:1.0.0", "localhost:5000/claim-exporter", "localhost/claim-exporter:latest",
				"ghcr.io/org/claim_exporter:v1.2-rc.1", "Registry.Example.com:443/a/b__c/d-e:TAG", "[::1]:5000/claim-exporter:v1",
				"ghcr.io/org/claim-exporter@sha256:" + strings.Repeat("a", 64), "ghcr.io/org/claim-exporter:v1@sha256:" + strings.Repeat("0", 64)},
			[]string{"UPPER::", "UPPER", "Org/claim-exporter:v1", "claim-exporter:", ":v1", "claim-exporter::v1", "claim exporter", "claim-exporter:v 1",
				"registry.example.com/", "registry.example.com//claim-exporter", "-claim-exporter", "claim-exporter-", "claim--exporter.",
				"claim-exporter:" + strings.Repeat("t", 129), "claim-exporter:.v1", "claim-exporter@sha256:abc", "claim-exporter@sha256:" + strings.Repeat("g", 64),
				"claim-exporter@" + strings.Repeat("a", 64), "https://registry.example.com/claim-exporter:v1", "registry.example.com:port/claim-exporter",
				"a/" + strings.Repeat("b", 255), "claim-exporter\n"}},
	}
	for _, c := range cases {
		for _, v := range c.accept {
			cfg := validConfig()
			c.set(&cfg, v)
			if err := cfg.Validate(); err != nil {
				t.Errorf("%s %q rejected: %v", c.key, v, err)
			}
		}
		for _, v := range c.reject {
			cfg := validConfig()
			c.set(&cfg, v)
			err := cfg.Validate()
			if err == nil {
				t.Errorf("%s %q accepted", c.key, v)
			} else if !strings.Contains(err.Error(), c.key) {
				t.Errorf("%s %q: the error does not name the key: %v", c.key, v, err)
			}
		}
	}
}

// activationTargetValue only decides between 0 and 1 replicas: with a floor above 0 it does
// nothing, which is rejected, saying so.
func TestActivationNeedsAZeroFloor(t *testing.T) {
	c := validConfig()
	c.MinReplicas, c.ActivationTargetValue = 0, "2"
	require.NoError(t, c.Validate())
	c.MinReplicas = 1
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "with a floor above 0 it does nothing")
}

// kubeContext must name a context of the parsed kubeconfig, whose cluster it defines: a string
// that only appears somewhere in the file (a user's name, a cluster's name) is not a context.
func TestKubeContextMustBeAContext(t *testing.T) {
	withClusters := twoContexts
	noClusters := strings.Replace(twoContexts, "clusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443\"}\n", "", 1)
	for _, ctxName := range []string{"a", "b", ""} {
		_, err := resolveKubeconfig(withClusters, ctxName)
		assert.NoError(t, err, "context %q", ctxName)
	}
	rejects := map[string]struct{ kubeconfig, context, want string }{
		"a cluster's name":      {withClusters, "c", `kubeContext "c" is not a context of the kubeconfig (its contexts are "a", "b")`},
		"a user's name":         {withClusters, "u", `kubeContext "u" is not a context`},
		"a substring":           {withClusters, "contexts", `kubeContext "contexts" is not a context`},
		"an undefined cluster":  {noClusters, "a", `context "a" names cluster "c", which the kubeconfig does not define`},
		"no current-context":    {strings.Replace(withClusters, "current-context: a\n", "", 1), "", "has no current-context and kubeContext is not set"},
		"a stale current":       {strings.Replace(withClusters, "current-context: a", "current-context: gone", 1), "", `the kubeconfig's current-context "gone" is not a context`},
		"not a kubeconfig":      {"apiVersion: v1\nkind: Config\ncontexts: 7\n", "a", "does not parse as a kubeconfig"},
		"JSON, unknown context": {`{"apiVersion":"v1","contexts":[{"name":"a","context":{"cluster":"c"}}],"clusters":[{"name":"c","cluster":{"server":"https://x"}}]}`, "b", `kubeContext "b" is not a context`},
	}
	for name, r := range rejects {
		_, err := resolveKubeconfig(r.kubeconfig, r.context)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), r.want, name)
		}
	}
}

// kubernetesVersion is the version of the cluster create mode makes: with clusterMode=existing it
// would be silently ignored, so a value other than the default is refused, like vpcId.
func TestKubernetesVersionIsRefusedOnAnExistingCluster(t *testing.T) {
	c := validConfig()
	c.KubernetesVersion = contract.KubernetesVersion
	require.NoError(t, c.Validate(), "the default (what Pulumi passes when the stack does not set it) is not an error")
	for _, v := range []string{"1.37", "latest"} {
		c.KubernetesVersion = v
		err := c.Validate()
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), `kubernetesVersion is "`+v+`", but it is only used with clusterMode=create`)
	}
	c.ClusterMode, c.Kubeconfig, c.ClusterName, c.KubernetesVersion = components.ModeCreate, "", "c", "1.37"
	require.NoError(t, c.Validate(), "create mode takes any version from 1.36 on")
}
