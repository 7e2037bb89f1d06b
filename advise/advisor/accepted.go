package advisor

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/awsprogram"
	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// A cluster the mocked run is pointed at and never reaches: under mocks the program only reads
// the kubeconfig's shape.
const mockKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: advise
  cluster: {server: "https://127.0.0.1:6443"}
contexts:
- name: advise
  context: {cluster: advise, user: advise}
current-context: advise
users:
- name: advise
  user: {token: advise}
`

// programConfig is the candidate's settings as Pulumi hands them to the program: top-level keys
// as strings, a --path object (sizing.*) as one JSON object, numbers as numbers.
func (c Candidate) programConfig() map[string]string {
	cfg := map[string]string{}
	objects := map[string]any{}
	for _, s := range c.Config {
		if top, _, nested := strings.Cut(s.Key, "."); !nested && !strings.Contains(top, "[") {
			cfg[top] = s.Value
			continue
		}
		setPath(objects, s.Key, s.Value)
	}
	for k, v := range objects {
		b, _ := json.Marshal(v)
		cfg[k] = string(b)
	}
	return cfg
}

// accepted runs the program under mocks on an existing cluster with the candidate's settings,
// so a setting advise recommends is one the program takes: a refusal is the program's own
// message.
func (c Candidate) accepted() error {
	cfg := map[string]string{
		"clusterMode": "existing", "kubeconfig": mockKubeconfig, "runtimeClassMode": "require",
		"agentSandboxMode": "adopt", "kedaMode": "adopt",
	}
	for k, v := range c.programConfig() {
		cfg[k] = v
	}
	full := map[string]string{}
	for k, v := range cfg {
		full[contract.ProjectName+":"+k] = v
	}
	rec := mockgraph.New()
	if err := pulumi.RunErr(awsprogram.Run, rec.Options(contract.ProjectName, "advise"), mockgraph.WithConfig(full)); err != nil {
		return fmt.Errorf("the program refuses %s: %w", c.Name, err)
	}
	return nil
}
