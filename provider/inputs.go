package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// configValues turns a component's inputs into what the program's config reader reads, the
// form the CLI hands stack config over in: scalars as text, lists and objects as JSON, the paths
// of the values the caller marked secret (pools[0].template.env.API_KEY), which the component
// keeps secret or refuses, and, in a preview (dryRun), the paths of the values not known yet.
// The component reads its inputs at once, as the program reads its config: only those
// program.MayBeUnknown names may be unknown, and only in a preview (an update resolves every
// input before the component is read); the checks then read program.UnknownStandIn in their
// place. Any other unknown input is refused, naming it.
func configValues(props resource.PropertyMap, dryRun bool) (program.ComponentInputs, error) {
	values := map[string]string{}
	var errs, secrets, unknowns []string
	for _, k := range props.StableKeys() {
		key := string(k)
		v, err := plain(props[k], key, &marks{dryRun: dryRun, secrets: &secrets, unknown: &unknowns})
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case v == nil: // null: unset, the default applies
		default:
			if s, ok := v.(string); ok {
				values[key] = s
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", key, err))
				continue
			}
			values[key] = string(b)
		}
	}
	if len(errs) > 0 {
		return program.ComponentInputs{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	slices.Sort(secrets)
	in := program.ComponentInputs{Values: values, Secrets: secrets}
	if len(unknowns) > 0 {
		in.Unknown = map[string]pulumi.StringOutput{}
		for _, p := range unknowns {
			in.Unknown[p] = pulumi.StringOutput{} // set by unknownOutputs, from the SDK's inputs
		}
	}
	return in, nil
}

// marks gathers, while plain reads a value, the paths of its secrets and of its unknowns.
type marks struct {
	dryRun           bool
	secrets, unknown *[]string
}

// plain is a property value as plain Go values; configValues writes all but text as JSON
// (2 as "2", true as "true"), as the CLI does. The path of each secret and of each unknown goes
// into m.
func plain(v resource.PropertyValue, path string, m *marks) (any, error) {
	switch {
	case v.IsSecret():
		*m.secrets = append(*m.secrets, path)
		return plain(v.SecretValue().Element, path, m)
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return m.unknownAt(path)
		}
		if o.Secret {
			*m.secrets = append(*m.secrets, path)
		}
		return plain(o.Element, path, m)
	case v.IsComputed():
		return m.unknownAt(path)
	case v.IsNull():
		return nil, nil
	case v.IsString():
		return v.StringValue(), nil
	case v.IsBool():
		return v.BoolValue(), nil
	case v.IsNumber():
		return v.NumberValue(), nil
	case v.IsArray():
		out := []any{}
		for i, e := range v.ArrayValue() {
			p, err := plain(e, fmt.Sprintf("%s[%d]", path, i), m)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	case v.IsObject():
		out := map[string]any{}
		for k, e := range v.ObjectValue() {
			p, err := plain(e, path+"."+string(k), m)
			if err != nil {
				return nil, err
			}
			out[string(k)] = p
		}
		return out, nil
	default:
		return nil, fmt.Errorf("input %s is a %s; the component takes text, numbers, booleans, lists and objects, as stack config does", path, v.TypeString())
	}
}

// unknownAt is an unknown value at path: in a preview, where it may be unknown, its stand-in;
// anywhere else, a refusal naming it.
func (m *marks) unknownAt(path string) (any, error) {
	switch {
	case m.dryRun && program.MayBeUnknown(path):
		*m.unknown = append(*m.unknown, path)
		return program.UnknownStandIn(path), nil
	case m.dryRun:
		return nil, fmt.Errorf("input %s is not known yet (it comes from a resource this deployment has still to create); the component reads its inputs at once, "+
			"as the program reads its stack config, and only %s may come from resources still to be created: pass %s as a value", path, program.UnknownInputs, path)
	}
	return nil, fmt.Errorf("input %s is not known in an update (the resource it comes from gave it no value), and the component needs its inputs' values to create anything: pass %s as a value", path, path)
}

// unknownOutputs sets in.Unknown's Outputs from the component's inputs as the SDK gives them (one
// Output per top-level input, with its dependencies and secrecy): each the value at its path,
// unknown in the preview that found it unknown.
func unknownOutputs(in program.ComponentInputs, inputs pulumi.Map) error {
	for path := range in.Unknown {
		key, steps := splitInputPath(path)
		top, ok := inputs[key]
		if !ok {
			return fmt.Errorf("input %s: the component's inputs hold no %s", path, key)
		}
		in.Unknown[path] = pulumi.ToOutput(top).ApplyT(func(v any) (string, error) {
			return textAt(v, path, steps)
		}).(pulumi.StringOutput)
	}
	return nil
}

// textAt is the text at steps below v, a top-level input's value.
func textAt(v any, path string, steps []inputStep) (string, error) {
	for _, step := range steps {
		switch x := v.(type) {
		case map[string]any:
			v = x[step.key]
		case []any:
			if step.index < 0 || step.index >= len(x) {
				return "", fmt.Errorf("input %s: no such entry", path)
			}
			v = x[step.index]
		default:
			return "", fmt.Errorf("input %s: a %T where an object or a list was expected", path, v)
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("input %s is a %T; it takes text", path, v)
	}
	return s, nil
}

// inputStep is one step of an input path below its top-level key: an object's key, or a list's
// index (index >= 0).
type inputStep struct {
	key   string
	index int
}

// splitInputPath splits one of the paths program.MayBeUnknown accepts
// (pools[1].template.env.API_KEY) into its top-level key and the steps below it; an env name is
// one step whatever it holds.
func splitInputPath(path string) (string, []inputStep) {
	key, rest, _ := strings.Cut(path, ".")
	var steps []inputStep
	if name, idx, ok := strings.Cut(key, "["); ok {
		i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		key = name
		steps = append(steps, inputStep{index: i})
	}
	for rest != "" {
		if name, ok := strings.CutPrefix(rest, "env."); ok {
			steps = append(steps, inputStep{key: "env", index: -1}, inputStep{key: name, index: -1})
			break
		}
		var step string
		step, rest, _ = strings.Cut(rest, ".")
		steps = append(steps, inputStep{key: step, index: -1})
	}
	return key, steps
}
