package main

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/asset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// The inputs reach the program's reader in the form the CLI hands stack config over, so the
// reader and its messages are the same for both.
func TestInputsBecomeConfigValuesAsTheCLIHandsThemOver(t *testing.T) {
	props := resource.NewPropertyMapFromMap(map[string]any{
		"namespace":   "sandboxes",
		"minReplicas": 2,
		"targetValue": "1.5",
		"headroom":    2.5, // not whole: the reader says so, as for `pulumi config set headroom 2.5`
		"pools": []any{
			map[string]any{"name": "a", "minReplicas": 0, "sizing": map[string]any{"policy": "arrivals", "bootSeconds": 8}},
		},
		"monitoring":    map[string]any{"serviceMonitor": true},
		"aBoolean":      true,
		"claimSelector": nil,
	})
	props["exporterImage"] = resource.MakeSecret(resource.NewProperty("registry.example/exporter:v1"))
	props["isolation"] = resource.NewProperty(resource.Output{Element: resource.NewProperty("gvisor"), Known: true})

	in, _, err := configValues(props, false)
	require.NoError(t, err)
	got := in.Values
	assert.Equal(t, []string{"exporterImage"}, in.Secrets)
	assert.Equal(t, map[string]string{
		"namespace":     "sandboxes",
		"minReplicas":   "2",
		"targetValue":   "1.5",
		"headroom":      "2.5",
		"pools":         `[{"minReplicas":0,"name":"a","sizing":{"bootSeconds":8,"policy":"arrivals"}}]`,
		"monitoring":    `{"serviceMonitor":true}`,
		"aBoolean":      "true",
		"exporterImage": "registry.example/exporter:v1",
		"isolation":     "gvisor",
	}, got)
}

// Outside the inputs that may come from resources still to be created, an unknown input is
// refused, naming it, in a preview and in an update alike.
func TestInputsNotKnownYetAreRefusedNamingThem(t *testing.T) {
	for name, props := range map[string]resource.PropertyMap{
		"computed":       {"namespace": resource.MakeComputed(resource.NewProperty(""))},
		"unknown output": {"namespace": resource.NewProperty(resource.Output{Known: false})},
		"inside a list": {"pools": resource.NewProperty([]resource.PropertyValue{
			resource.NewProperty(resource.PropertyMap{"namespace": resource.MakeComputed(resource.NewProperty(""))}),
		})},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := configValues(props, true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not known yet")
			assert.Contains(t, err.Error(), "only "+program.UnknownInputs+" may come from resources still to be created")
			_, _, err = configValues(props, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not known in an update")
			if name == "inside a list" {
				assert.Contains(t, err.Error(), "input pools[0].namespace")
			} else {
				assert.Contains(t, err.Error(), "input namespace")
			}
		})
	}
	_, _, err := configValues(resource.PropertyMap{"template": resource.NewAssetProperty(&asset.Asset{Text: "x"})}, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "input template is a")
}

// A secret keeps its path, wherever it sits (a secret value, or a known secret output), so the
// component keeps it secret or refuses it, never hands it on as plain text unmarked.
func TestSecretInputsAreNamedByTheirPaths(t *testing.T) {
	props := resource.PropertyMap{
		"template": resource.NewProperty(resource.PropertyMap{
			"image": resource.NewProperty("registry.example/agent:1"),
			"env": resource.NewProperty(resource.PropertyMap{
				"API_KEY":   resource.MakeSecret(resource.NewProperty("s3cr3t")),
				"LOG_LEVEL": resource.NewProperty("info"),
			}),
		}),
		"pools": resource.NewProperty([]resource.PropertyValue{resource.NewProperty(resource.PropertyMap{
			"name": resource.NewProperty("a"),
			"template": resource.NewProperty(resource.PropertyMap{"env": resource.NewProperty(resource.PropertyMap{
				"TOKEN": resource.NewProperty(resource.Output{Element: resource.NewProperty("t0k3n"), Known: true, Secret: true}),
			})}),
		})}),
	}
	in, _, err := configValues(props, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"pools[0].template.env.TOKEN", "template.env.API_KEY"}, in.Secrets)
	assert.Contains(t, in.Values["template"], `"API_KEY":"s3cr3t"`, "the reader gets the value; the path says it is secret")
}

// In a preview, the images, the exporter's repository and the env values may come from resources
// still to be created: each unknown one is named by its path and read as its stand-in, which the
// checks accept; an update refuses the same unknowns.
func TestUnknownImagesAndEnvValuesAreStandInsInAPreview(t *testing.T) {
	unknown := resource.NewProperty(resource.Output{Known: false})
	shorthand := resource.PropertyMap{
		"exporterImageRepository": resource.MakeComputed(resource.NewProperty("")),
		"template": resource.NewProperty(resource.PropertyMap{
			"image": unknown,
			"env":   resource.NewProperty(resource.PropertyMap{"CONFIG_UID": unknown, "LOG_LEVEL": resource.NewProperty("info")}),
		}),
	}
	listed := resource.PropertyMap{
		"exporterImage": unknown,
		"pools": resource.NewProperty([]resource.PropertyValue{resource.NewProperty(resource.PropertyMap{
			"name":     resource.NewProperty("a"),
			"template": resource.NewProperty(resource.PropertyMap{"image": unknown, "env": resource.NewProperty(resource.PropertyMap{"K": unknown})}),
		})}),
	}
	in, paths, err := configValues(shorthand, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"exporterImageRepository", "template.env.CONFIG_UID", "template.image"}, paths)
	assert.Equal(t, program.UnknownStandIn("exporterImageRepository"), in.Values["exporterImageRepository"])
	assert.JSONEq(t, `{"image":"`+program.UnknownStandIn("template.image")+`","env":{"CONFIG_UID":"","LOG_LEVEL":"info"}}`, in.Values["template"])
	_, err = program.LoadComponentConfig("team", "dev", "sandboxes", program.ComponentInputs{Values: in.Values})
	require.NoError(t, err, "the stand-ins pass every check")

	in, paths, err = configValues(listed, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"exporterImage", "pools[0].template.env.K", "pools[0].template.image"}, paths)
	_, err = program.LoadComponentConfig("team", "dev", "sandboxes", program.ComponentInputs{Values: in.Values})
	require.NoError(t, err, "the stand-ins pass every check")

	for _, props := range []resource.PropertyMap{shorthand, listed} {
		_, _, err = configValues(props, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not known in an update")
	}
}
