package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// The schema is generated from Pulumi.yaml (the inputs: the program's keys less its cluster's,
// with their types, defaults and descriptions), from the shapes and enums of the structured and
// closed keys (program/inputshapes.go: the types) and from componentOutputs below. After
// changing any of them:
//
//	go test ./provider -run TestSchemaIsGeneratedFromPulumiYaml -update
var update = flag.Bool("update", false, "write schema.json from Pulumi.yaml instead of comparing")

// componentOutputs are the component's outputs: the program's stack outputs less the cluster's,
// under the same names (verify reads them). A test holds these to what the component returns.
var componentOutputs = map[string]struct{ typ, description string }{
	"namespace":              {"string", "The first pool's namespace."},
	"poolName":               {"string", "The first pool's SandboxWarmPool."},
	"templateName":           {"string", "The first pool's SandboxTemplate."},
	"scaledObjectName":       {"string", "The first pool's ScaledObject."},
	"exporterUrl":            {"string", "The URL KEDA reads the first pool's demand from."},
	"claimSelector":          {"string", "The label selector of the first pool's claims (empty: every claim in its namespace)."},
	"minReplicas":            {"integer", "The first pool's floor."},
	"maxReplicas":            {"integer", "The first pool's ceiling."},
	"loadCap":                {"integer", "The claims verify's load holds at the first pool's peak."},
	"pools":                  {"pools", "Every pool: name, namespace, templateName, scaledObjectName, exporterUrl, claimSelector, minReplicas, maxReplicas, loadCap, sizingPolicy."},
	"stackNamespace":         {"string", "The namespace of the claim exporter."},
	"stackLabel":             {"string", "The value of the stack label on the component's namespaces (<project>.<stack>)."},
	"exporterService":        {"string", "The claim exporter's Service."},
	"exporterServiceAccount": {"string", "The claim exporter's ServiceAccount."},
	"isolation":              {"string", "The isolation verify holds the sandboxes to: vm or gvisor."},
}

// anyObject is an object of any values: the outputs' pools.
func anyObject() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": map[string]any{"$ref": "pulumi.json#/Any"}}
}

// typeRef is a reference to one of the package's own types.
func typeRef(name string) map[string]any {
	return map[string]any{"$ref": "#/types/" + Name + ":index:" + name}
}

// propertyType is an input's schema type: its shape or enum (program.StructuredInputs,
// program.EnumInputs) where it has one, else its Pulumi.yaml config type.
func propertyType(key string, c workspace.ProjectConfigType) (map[string]any, error) {
	if shape, ok := program.StructuredInputs[key]; ok {
		switch c.TypeName() {
		case "object":
			return typeRef(shape), nil
		case "array":
			return map[string]any{"type": "array", "items": typeRef(shape)}, nil
		}
		return nil, fmt.Errorf("Pulumi.yaml types %s %s, but its shape %s is an object or a list of them", key, c.TypeName(), shape)
	}
	if enum, ok := program.EnumInputs[key]; ok {
		if c.TypeName() != "string" {
			return nil, fmt.Errorf("Pulumi.yaml types %s %s, but its enum %s is text", key, c.TypeName(), enum)
		}
		return typeRef(enum), nil
	}
	switch name := c.TypeName(); name {
	case "string", "integer", "boolean":
		p := map[string]any{"type": name}
		// The default the program's CLI hands over; an empty text is no default (unset is empty).
		if c.Default != nil && c.Default != "" {
			p["default"] = c.Default
		}
		return p, nil
	case "array":
		if c.Items != nil && c.Items.Type != "string" {
			return nil, fmt.Errorf("config list %s holds %s; only lists of text or of a shape have a schema type here", key, c.Items.Type)
		}
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, nil
	default:
		return nil, fmt.Errorf("config type %q of %s has no schema type here: give it a shape (program.StructuredInputs)", name, key)
	}
}

// fieldType is a shape's field as a schema property.
func fieldType(f program.Field) map[string]any {
	var p map[string]any
	switch {
	case f.Enum != "":
		p = typeRef(f.Enum)
	case f.Type == program.FieldStrings:
		p = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	case f.Type == program.FieldStringMap:
		p = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	case f.Type == program.FieldObject:
		p = typeRef(f.Of)
	case f.Type == program.FieldObjects:
		p = map[string]any{"type": "array", "items": typeRef(f.Of)}
	default:
		p = map[string]any{"type": string(f.Type)}
	}
	p["description"] = f.Description
	if f.Default != "" {
		// In the description only: the reader applies it, and some fields refuse being set where
		// they would do nothing (monitoring's with monitoring off), so an SDK must not send it.
		p["description"] = f.Description + " Default: " + f.Default + "."
	}
	return p
}

// enumName is a value as an identifier for the SDKs: linux/arm64 -> LinuxArm64.
func enumName(v string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// shapeTypes are the shapes and enums as the schema's types.
func shapeTypes() map[string]any {
	types := map[string]any{}
	for name, s := range program.InputShapes() {
		props, required := map[string]any{}, []string{}
		for _, f := range s.Fields {
			props[f.Name] = fieldType(f)
			if f.Required {
				required = append(required, f.Name)
			}
		}
		t := map[string]any{"type": "object", "description": s.Description, "properties": props}
		if len(required) > 0 {
			t["required"] = required
		}
		types[Name+":index:"+name] = t
	}
	for name, e := range program.InputEnums() {
		var values []any
		for _, v := range e.Values {
			values = append(values, map[string]any{"name": enumName(v.Value), "value": v.Value, "description": v.Description})
		}
		types[Name+":index:"+name] = map[string]any{"type": "string", "description": e.Description, "enum": values}
	}
	return types
}

// plainAllTheWayDown marks a type and the types inside it plain: the component reads every value
// at once, as the program reads stack config, so an SDK takes values, not outputs.
func plainAllTheWayDown(p map[string]any) {
	p["plain"] = true
	for _, inner := range []string{"items", "additionalProperties"} {
		if t, ok := p[inner].(map[string]any); ok {
			plainAllTheWayDown(t)
		}
	}
}

// generateSchema is the package schema: the component's inputs from Pulumi.yaml and the shapes of
// its structured ones (program.InputShapes), each plain (the component reads them at once, as
// the program reads stack config) but those a team may compute from other resources
// (program.MayBeUnknown: the exporter's image and repository; inside the template, its image
// and env values, which the object types leave as inputs), and its outputs.
func generateSchema(t *testing.T) []byte {
	t.Helper()
	proj, err := workspace.LoadProject("../Pulumi.yaml")
	require.NoError(t, err)
	inputs := map[string]any{}
	for _, key := range program.ComponentInputKeys() {
		c, ok := proj.Config[key]
		require.Truef(t, ok, "the program reads %s, which Pulumi.yaml does not declare", key)
		p, err := propertyType(key, c)
		require.NoErrorf(t, err, "input %s", key)
		if !program.MayBeUnknown(key) {
			plainAllTheWayDown(p)
		}
		p["description"] = c.Description
		inputs[key] = p
	}
	outputs := map[string]any{}
	for key, o := range componentOutputs {
		p := map[string]any{"type": o.typ, "description": o.description}
		if o.typ == "pools" {
			p = map[string]any{"type": "array", "description": o.description, "items": anyObject()}
		}
		outputs[key] = p
	}
	spec := map[string]any{
		"name":        Name,
		"displayName": "Autoscaled warm pools of agent sandboxes",
		"version":     Version,
		"description": "A warm pool of pre-booted, VM-isolated agent sandboxes (kubernetes-sigs/agent-sandbox) whose size follows SandboxClaim demand through KEDA, on a cluster you already have.",
		"keywords":    []string{"kubernetes", "keda", "agent-sandbox", "category/cloud", "kind/component"},
		"types":       shapeTypes(),
		"resources": map[string]any{
			program.AutoscaledWarmPoolType: map[string]any{
				"isComponent":     true,
				"description":     "The warm pools, their claim exporter and their KEDA autoscalers, with the runtime class checked and agent-sandbox and KEDA installed or adopted, on the cluster your kubernetes provider (the providers option) reaches. Its inputs are the program's stack config keys less the cluster's, with the same defaults and the same checks. Several in a stack (one per team) each need namespaces of their own; one installs KEDA and agent-sandbox, the others adopt them and list it in dependsOn.",
				"inputProperties": inputs,
				"properties":      outputs,
				"required":        slices.Sorted(maps.Keys(componentOutputs)),
			},
		},
		"language": map[string]any{
			"go":     map[string]any{"importBasePath": "warmpool.local/warm-pool-autoscaling-keda/sdk/go/warmpool", "respectSchemaVersion": true},
			"nodejs": map[string]any{"packageName": "@warmpool/warmpool", "respectSchemaVersion": true, "dependencies": map[string]string{"@pulumi/pulumi": "^3.0.0"}},
			"python": map[string]any{"packageName": "pulumi_warmpool", "respectSchemaVersion": true, "requires": map[string]string{"pulumi": ">=3.0.0,<4.0.0"}},
		},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(spec))
	return b.Bytes()
}

func TestSchemaIsGeneratedFromPulumiYaml(t *testing.T) {
	want := generateSchema(t)
	if *update {
		require.NoError(t, os.WriteFile("schema.json", want, 0o644))
		return
	}
	assert.Equal(t, string(want), string(schema),
		"schema.json is not what Pulumi.yaml and componentOutputs give; run `go test ./provider -run TestSchemaIsGeneratedFromPulumiYaml -update`")
}

// TestSchemaDescribesTheComponent reads the committed schema as the engine and the SDK
// generators do: the component's type, its inputs the program's keys less the cluster's, its
// outputs what the component returns, and the version the plugin reports.
func TestSchemaDescribesTheComponent(t *testing.T) {
	var spec struct {
		Name      string
		Version   string
		Resources map[string]struct {
			IsComponent     bool
			InputProperties map[string]struct{ Plain bool }
			Properties      map[string]json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(schema, &spec))
	assert.Equal(t, Name, spec.Name)
	assert.Equal(t, Version, spec.Version)
	assert.True(t, strings.HasPrefix(program.AutoscaledWarmPoolType, Name+":index:"))
	require.Equal(t, []string{program.AutoscaledWarmPoolType}, slices.Collect(maps.Keys(spec.Resources)))
	c := spec.Resources[program.AutoscaledWarmPoolType]
	assert.True(t, c.IsComponent)
	assert.Equal(t, program.ComponentInputKeys(), slices.Sorted(maps.Keys(c.InputProperties)))
	for key, p := range c.InputProperties {
		if program.MayBeUnknown(key) {
			assert.Falsef(t, p.Plain, "input %s takes an Output: a team may compute it from another resource", key)
		} else {
			assert.Truef(t, p.Plain, "input %s is plain: the component reads it at once", key)
		}
	}
	for _, key := range program.ClusterKeys {
		assert.NotContains(t, c.InputProperties, key)
	}

	// What the component returns, under mocks.
	t.Setenv("PULUMI_CONFIG", "{}")
	rec := mockgraph.New()
	t.Cleanup(rec.Close)
	var returned []string
	require.NoError(t, pulumi.RunErr(func(ctx *pulumi.Context) error {
		caller, err := kubernetes.NewProvider(ctx, "caller", &kubernetes.ProviderArgs{Kubeconfig: pulumi.String("{}")})
		if err != nil {
			return err
		}
		wp, err := program.NewAutoscaledWarmPool(ctx, "team", program.ComponentInputs{Values: map[string]string{"kedaMode": "adopt", "agentSandboxMode": "adopt"}}, pulumi.Providers(caller))
		if err != nil {
			return err
		}
		returned = slices.Sorted(maps.Keys(wp.Outputs))
		return nil
	}, rec.Options("consumer", "dev")))
	assert.Equal(t, returned, slices.Sorted(maps.Keys(c.Properties)), "the schema's outputs are the component's")
}

// The SDKs send an input's schema default when the caller leaves it unset; the component must
// then build what it builds with the input left out: the same config, with one pool and with
// a list of pools (where the shorthand's keys must not count as set).
func TestSchemaDefaultsGiveWhatUnsetInputsGive(t *testing.T) {
	var spec struct {
		Resources map[string]struct {
			InputProperties map[string]struct{ Default any }
		}
	}
	require.NoError(t, json.Unmarshal(schema, &spec))
	defaults := map[string]string{}
	for key, p := range spec.Resources[program.AutoscaledWarmPoolType].InputProperties {
		switch d := p.Default.(type) {
		case nil:
		case string:
			defaults[key] = d
		default:
			b, err := json.Marshal(d)
			require.NoError(t, err)
			defaults[key] = string(b)
		}
	}
	require.NotEmpty(t, defaults, "the schema gives defaults")
	for name, given := range map[string]map[string]string{
		"one pool":      {},
		"several pools": {"pools": `[{"name": "code"}, {"name": "browser", "maxReplicas": 5}]`},
	} {
		t.Run(name, func(t *testing.T) {
			unset, err := program.LoadComponentConfig("team", "dev", "sandboxes", program.ComponentInputs{Values: given})
			require.NoError(t, err)
			withDefaults := maps.Clone(defaults)
			maps.Copy(withDefaults, given)
			set, err := program.LoadComponentConfig("team", "dev", "sandboxes", program.ComponentInputs{Values: withDefaults})
			require.NoError(t, err, "every schema default sent")
			assert.Equal(t, unset, set, "the config with every schema default sent is the config without them")
		})
	}
}
