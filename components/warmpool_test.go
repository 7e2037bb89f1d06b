package components

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// An Agent with settings but no image is refused, not replaced by the placeholder with its
// settings dropped; the zero Agent is the placeholder.
func TestAgentWithoutImageIsRefused(t *testing.T) {
	run := func(a Agent) (*mockgraph.Recorder, error) {
		rec := mockgraph.New()
		t.Cleanup(rec.Close)
		err := pulumi.RunErr(func(ctx *pulumi.Context) error {
			_, err := NewWarmPool(ctx, "pool", &WarmPoolArgs{Namespace: "agents", TemplateName: "t", PoolName: "p",
				RuntimeClassName: "isolated-sandbox", Agent: a})
			return err
		}, rec.Options("project", "stack"))
		return rec, err
	}
	rec, err := run(Agent{Requests: map[string]string{"memory": "4Gi"}})
	if err == nil || !strings.Contains(err.Error(), "Agent has settings but no Image") {
		t.Errorf("an Agent with a request and no image: err %v, want it refused", err)
	}
	if n := len(rec.All()); n != 0 {
		t.Errorf("%d resources registered for a refused Agent, want 0", n)
	}
	if _, err := run(Agent{}); err != nil {
		t.Errorf("the zero Agent (the placeholder) refused: %v", err)
	}
}
