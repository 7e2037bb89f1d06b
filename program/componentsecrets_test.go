package program

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clearStrings are the strings among v's that no secret covers, with where they are.
func clearStrings(v resource.PropertyValue, at string, into map[string]string) {
	switch {
	case v.IsSecret():
	case v.IsOutput() && v.OutputValue().Secret:
	case v.IsOutput():
		clearStrings(v.OutputValue().Element, at, into)
	case v.IsString():
		into[at] = v.StringValue()
	case v.IsArray():
		for i, e := range v.ArrayValue() {
			clearStrings(e, fmt.Sprintf("%s[%d]", at, i), into)
		}
	case v.IsObject():
		for k, e := range v.ObjectValue() {
			clearStrings(e, at+"."+string(k), into)
		}
	}
}

// A secret env value of the component's template, the shorthand's or a listed pool's, reaches
// its SandboxTemplate as a secret, and no child holds it in clear; the other values stay plain.
func TestSecretEnvInputsStaySecretInTheChildren(t *testing.T) {
	const apiKey, token = "s3cr3t-api-key", "s3cr3t-token"
	for name, tc := range map[string]struct {
		inputs  map[string]string
		secrets []string
		secret  []string // the values that must be secret
	}{
		"the one pool's template": {
			inputs:  map[string]string{"template": `{"image": "registry.example/agent:1.0", "env": {"API_KEY": "` + apiKey + `", "LOG_LEVEL": "info"}}`},
			secrets: []string{"template.env.API_KEY"},
			secret:  []string{apiKey},
		},
		"a listed pool's whole env": {
			inputs:  map[string]string{"pools": `[{"name": "a"}, {"name": "b", "template": {"image": "registry.example/agent:1.0", "env": {"TOKEN": "` + token + `", "API_KEY": "` + apiKey + `"}}}]`},
			secrets: []string{"pools[1].template.env"},
			secret:  []string{apiKey, token},
		},
	} {
		t.Run(name, func(t *testing.T) {
			inputs := map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt"}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			rec, _, err := runComponentWith(t, ComponentInputs{Values: inputs, Secrets: tc.secrets})
			require.NoError(t, err)
			templates, envSeen := 0, 0
			for _, r := range rec.All() {
				clear := map[string]string{}
				clearStrings(resource.NewProperty(r.Inputs), r.Type+"::"+r.Name, clear)
				for at, s := range clear {
					for _, secret := range tc.secret {
						assert.NotContainsf(t, s, secret, "%s holds a secret input in clear", at)
					}
					if strings.HasSuffix(at, ".value") && s == "info" {
						envSeen++ // a value not marked secret stays plain
					}
				}
				if r.Type == typeTemplate {
					templates++
				}
			}
			assert.Positive(t, templates)
			if name == "the one pool's template" {
				assert.Equal(t, 1, envSeen, "LOG_LEVEL, not marked secret, stays plain")
			}
		})
	}
}

// A secret anywhere but a template's env is refused, naming it, before anything is registered.
func TestSecretInputsElsewhereAreRefused(t *testing.T) {
	rec, _, err := runComponentWith(t, ComponentInputs{Values: map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt", "exporterImage": "registry.example/exporter:v1", "namespace": "team-a"},
		Secrets: []string{"exporterImage", "namespace"}})
	require.Error(t, err)
	for _, want := range []string{"exporterImage is a secret", "namespace is a secret", "keeps a secret input secret only in a template's env values", "pass exporterImage as a plain value"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, []string{typeK8sProvider + "::caller"}, registeredTypes(rec.All()), "nothing of the component may be registered before its inputs are valid")
}
