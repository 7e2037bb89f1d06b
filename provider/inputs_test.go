package main

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/asset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	got, secrets, err := configValues(props)
	require.NoError(t, err)
	assert.Equal(t, []string{"exporterImage"}, secrets)
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

func TestInputsNotKnownYetAreRefusedNamingThem(t *testing.T) {
	for name, props := range map[string]resource.PropertyMap{
		"computed":       {"namespace": resource.MakeComputed(resource.NewProperty(""))},
		"unknown output": {"namespace": resource.NewProperty(resource.Output{Known: false})},
		"inside a list": {"pools": resource.NewProperty([]resource.PropertyValue{
			resource.NewProperty(resource.PropertyMap{"namespace": resource.MakeComputed(resource.NewProperty(""))}),
		})},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := configValues(props)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not known yet")
			if name == "inside a list" {
				assert.Contains(t, err.Error(), "input pools[0].namespace")
			} else {
				assert.Contains(t, err.Error(), "input namespace")
			}
		})
	}
	_, _, err := configValues(resource.PropertyMap{"template": resource.NewAssetProperty(&asset.Asset{Text: "x"})})
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
	values, secrets, err := configValues(props)
	require.NoError(t, err)
	assert.Equal(t, []string{"pools[0].template.env.TOKEN", "template.env.API_KEY"}, secrets)
	assert.Contains(t, values["template"], `"API_KEY":"s3cr3t"`, "the reader gets the value; the path says it is secret")
}
