package program

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// readerOf is how each structured key's reader reads a value of its shape; pools: one entry.
var readerOf = map[string]func(o configObject){
	"template":   func(o configObject) { readAgent(o) },
	"sizing":     func(o configObject) { readSizing(o) },
	"scaleUp":    func(o configObject) { readScalingRules(o, components.DefaultScaleUp(), scaleUpDirection) },
	"scaleDown":  func(o configObject) { readScalingRules(o, components.DefaultScaleDown(), scaleDownDirection) },
	"keda":       func(o configObject) { readKeda(o) },
	"monitoring": func(o configObject) { readMonitoring(o) },
	"pools":      func(o configObject) { (&Config{}).readPool(o) },
}

// howRead is the configObject accessor that reads each field type.
var howRead = map[FieldType]string{
	FieldString: "str", FieldNumber: "str", FieldInteger: "integer", FieldBoolean: "boolean",
	FieldStrings: "strings", FieldStringMap: "stringMap", FieldObject: "object", FieldObjects: "objects",
}

// shapeSample is a value of the shape with every object field present (empty) and every list
// of objects holding one, so its reader reaches every nested reader.
func shapeSample(t *testing.T, shapes map[string]InputShape, name string) map[string]any {
	t.Helper()
	s, ok := shapes[name]
	require.Truef(t, ok, "no shape %s", name)
	out := map[string]any{}
	for _, f := range s.Fields {
		switch f.Type {
		case FieldObject:
			out[f.Name] = shapeSample(t, shapes, f.Of)
		case FieldObjects:
			out[f.Name] = []any{shapeSample(t, shapes, f.Of)}
		}
	}
	return out
}

// shapeReads is what a reader holding to the shape reads: each field's path and accessor.
func shapeReads(t *testing.T, shapes map[string]InputShape, name, at string, into map[string]string) {
	t.Helper()
	for _, f := range shapes[name].Fields {
		how, ok := howRead[f.Type]
		require.Truef(t, ok, "%s%s has type %q, which no reader reads", at, f.Name, f.Type)
		into[at+f.Name] = how
		switch f.Type {
		case FieldObject:
			shapeReads(t, shapes, f.Of, at+f.Name+".", into)
		case FieldObjects:
			shapeReads(t, shapes, f.Of, at+f.Name+"[].", into)
		}
	}
}

var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// The readers read exactly the fields the shapes declare, each the way its type says: a field
// added to a reader and not to its shape (or the other way round) fails here, so the package
// schema, generated from the shapes, types what the reader takes.
func TestTheReadersReadTheFieldsOfTheirShapes(t *testing.T) {
	shapes := InputShapes()
	assert.ElementsMatch(t, slices.Collect(maps.Keys(StructuredInputs)), slices.Collect(maps.Keys(readerOf)), "a reader for every structured key")
	for key, shape := range StructuredInputs {
		t.Run(key, func(t *testing.T) {
			raw, err := json.Marshal(shapeSample(t, shapes, shape))
			require.NoError(t, err)
			at := key + "."
			if key == "pools" {
				at = "pools[0]."
			}
			var errs []string
			o, ok := decodeObject(string(raw), at, &errs)
			require.True(t, ok, errs)
			o.reads = map[string]string{}
			readerOf[key](o)
			got := map[string]string{}
			for path, how := range o.reads {
				got[listIndex.ReplaceAllString(path, "[]")] = how
			}
			want := map[string]string{}
			shapeReads(t, shapes, shape, listIndex.ReplaceAllString(at, "[]"), want)
			assert.Equal(t, want, got, "the fields %s's reader reads, and how, against shape %s", key, shape)
		})
	}
	// Every shape and enum named is defined, and every shape is reached from a key.
	enums, reached := InputEnums(), map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		reached[name] = true
		for _, f := range shapes[name].Fields {
			if f.Of != "" {
				require.Containsf(t, shapes, f.Of, "%s.%s", name, f.Name)
				reach(f.Of)
			}
			if f.Enum != "" {
				require.Containsf(t, enums, f.Enum, "%s.%s", name, f.Name)
			}
		}
	}
	for _, shape := range StructuredInputs {
		reach(shape)
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(shapes)), slices.Collect(maps.Keys(reached)), "every shape is some key's")
	for key, enum := range EnumInputs {
		require.Containsf(t, enums, enum, "key %s", key)
	}
}

// enumCases are where each enum is set, with what its values need beside them to be valid.
func enumCases() []struct {
	enum, key string
	inputs    func(v string) map[string]string
} {
	type enumCase = struct {
		enum, key string
		inputs    func(v string) map[string]string
	}
	var cases []enumCase
	companions := map[string]map[string]string{
		"runtimeClassMode":      {"runtimeClassHandler": "kata-qemu"},
		"exporterImagePlatform": {"exporterImageRepository": "registry.example/team/claim-exporter"},
	}
	for key, enum := range EnumInputs {
		cases = append(cases, enumCase{enum, key, func(v string) map[string]string {
			in := map[string]string{key: v}
			maps.Copy(in, companions[key])
			return in
		}})
	}
	cases = append(cases,
		enumCase{"SizingPolicy", "sizing.policy", func(v string) map[string]string { return map[string]string{"sizing": `{"policy": "` + v + `"}`} }},
		enumCase{"ScalingPolicy", "scaleUp.policy", func(v string) map[string]string {
			return map[string]string{"scaleUp": `{"policy": "` + v + `", "value": 2}`}
		}},
	)
	return cases
}

// Each enum's values are what the reader and its checks accept: every value passes, and a value
// outside is refused naming the key. So the schema's enums, generated from InputEnums, never
// refuse what the program takes or offer what it refuses.
func TestEnumValuesAreTheOnesTheConfigAccepts(t *testing.T) {
	enums := InputEnums()
	used := map[string]bool{}
	for _, c := range enumCases() {
		used[c.enum] = true
		for _, v := range enums[c.enum].Values {
			_, err := LoadComponentConfig("team", "dev", "sandboxes", ComponentInputs{Values: c.inputs(v.Value)})
			assert.NoErrorf(t, err, "%s %q is a value of enum %s", c.key, v.Value, c.enum)
		}
		_, err := LoadComponentConfig("team", "dev", "sandboxes", ComponentInputs{Values: c.inputs("bogus")})
		if assert.Errorf(t, err, "%s bogus", c.key) {
			assert.Regexp(t, regexp.QuoteMeta(c.key)+`( is)? "bogus"`, err.Error())
		}
	}
	for _, f := range InputShapes() {
		for _, field := range f.Fields {
			if field.Enum != "" {
				assert.Truef(t, used[field.Enum], "enum %s (%s.%s) has a case here", field.Enum, f.Name, field.Name)
			}
		}
	}
}

// Pulumi.yaml's description of each structured key (what `pulumi config` shows, and the
// schema's description of the input) names every field of its shape, and its type is the
// shape's: an object, or for pools a list of objects.
func TestPulumiYamlDescribesEveryFieldOfEachShape(t *testing.T) {
	proj, err := workspace.LoadProject("../Pulumi.yaml")
	require.NoError(t, err)
	shapes := InputShapes()
	for key, shape := range StructuredInputs {
		c, ok := proj.Config[key]
		require.Truef(t, ok, "Pulumi.yaml does not declare %s", key)
		want := "object"
		if key == "pools" {
			want = "array"
			if assert.NotNil(t, c.Items, "pools") {
				assert.Equal(t, "object", c.Items.Type, "pools holds objects")
			}
		}
		assert.Equalf(t, want, c.TypeName(), "Pulumi.yaml's type of %s", key)
		for _, f := range shapes[shape].Fields {
			assert.Regexpf(t, `\b`+regexp.QuoteMeta(f.Name)+`\b`, c.Description, "Pulumi.yaml's description of %s names %s (shape %s)", key, f.Name, shape)
		}
	}
}
