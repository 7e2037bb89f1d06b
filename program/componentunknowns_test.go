package program

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

// unknownText is an Output a preview does not know, as the plugin hands one over.
func unknownText() pulumi.StringOutput {
	return pulumi.UnsafeUnknownOutput(nil).ApplyT(func(any) string { return "" }).(pulumi.StringOutput)
}

// In a preview, an image or env value that comes from a resource still to be created reaches the
// children through its Output, not the stand-in the checks read: the SandboxTemplate's image and
// env value, the exporter's image. Given Outputs of known values, the children hold those values;
// given unknown ones (a preview), they hold nothing there (the mock monitor, like the engine's
// preview, receives them unknown), and the stand-in is written nowhere.
func TestUnknownInputsReachTheChildrenThroughTheirOutputs(t *testing.T) {
	values := map[string]string{
		"kedaMode": "adopt", "agentSandboxMode": "adopt",
		"exporterImage": UnknownStandIn("exporterImage"),
		"template":      `{"image": "` + UnknownStandIn("template.image") + `", "env": {"CONFIG_UID": "", "LOG_LEVEL": "info"}}`,
	}
	known := func(s string) pulumi.StringOutput { return pulumi.String(s).ToStringOutput() }
	for name, tc := range map[string]struct {
		unknown map[string]pulumi.StringOutput
		preview bool
		want    map[string]any // image, CONFIG_UID's value, the exporter's image; nil: absent
	}{
		"outputs known": {
			unknown: map[string]pulumi.StringOutput{"exporterImage": known("registry.example/exporter:from-output"),
				"template.image": known("registry.example/agent:from-output"), "template.env.CONFIG_UID": known("uid-from-output")},
			want: map[string]any{"image": "registry.example/agent:from-output", "CONFIG_UID": "uid-from-output", "exporter": "registry.example/exporter:from-output"},
		},
		"outputs unknown, a preview": {
			unknown: map[string]pulumi.StringOutput{"exporterImage": unknownText(), "template.image": unknownText(), "template.env.CONFIG_UID": unknownText()},
			preview: true,
			want:    map[string]any{"image": nil, "CONFIG_UID": nil, "exporter": nil},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec, _, err := runComponentWith(t, ComponentInputs{Values: values, Unknown: tc.unknown}, func(r *mockgraph.Recorder) { r.Preview = tc.preview })
			require.NoError(t, err)
			got := map[string]any{}
			for _, r := range rec.All() {
				switch r.Type {
				case typeTemplate:
					v, ok := r.Path("spec", "podTemplate", "spec", "containers")
					require.True(t, ok)
					c := plainValue(v).([]any)[0].(map[string]any)
					got["image"] = c["image"]
					env := c["env"].([]any)
					require.Len(t, env, 2)
					assert.Equal(t, "CONFIG_UID", env[0].(map[string]any)["name"])
					got["CONFIG_UID"] = env[0].(map[string]any)["value"]
					assert.Equal(t, "info", env[1].(map[string]any)["value"])
				case typeDeployment:
					v, ok := r.Path("spec", "template", "spec", "containers")
					require.True(t, ok)
					got["exporter"] = plainValue(v).([]any)[0].(map[string]any)["image"]
				}
				clear := map[string]string{}
				clearStrings(resource.NewProperty(r.Inputs), r.Type+"::"+r.Name, clear)
				for at, s := range clear {
					assert.NotContainsf(t, s, "not-known-until-update", "%s holds a stand-in", at)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// An unknown input outside the images and env values is refused, naming it, before anything of
// the component is registered.
func TestUnknownInputsElsewhereAreRefused(t *testing.T) {
	rec, _, err := runComponentWith(t, ComponentInputs{
		Values:  map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt", "claimSelector": ""},
		Unknown: map[string]pulumi.StringOutput{"claimSelector": unknownText()},
	}, func(r *mockgraph.Recorder) { r.Preview = true })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "claimSelector is not known yet")
	assert.Contains(t, err.Error(), "only "+UnknownInputs+" may be")
	assert.Equal(t, []string{typeK8sProvider + "::caller"}, registeredTypes(rec.All()))
}

func TestWhichInputsMayBeUnknown(t *testing.T) {
	for _, p := range []string{"exporterImage", "exporterImageRepository", "template.image", "template.env.API_KEY", "pools[2].template.image", "pools[0].template.env.A.B"} {
		assert.Truef(t, MayBeUnknown(p), "%s may be unknown", p)
	}
	for _, p := range []string{"namespace", "template", "template.env", "template.command", "pools[0].namespace", "pools[0].template", "sizing.policy", "monitoring.labels.team"} {
		assert.Falsef(t, MayBeUnknown(p), "%s must be known", p)
	}
}
