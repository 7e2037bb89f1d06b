package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/program"
)

// configValues turns a component's inputs into what the program's config reader reads, the
// form the CLI hands stack config over in: scalars as text, lists and objects as JSON, the paths
// of the values the caller marked secret (pools[0].template.env.API_KEY), which the component
// keeps secret or refuses, and, in a preview (dryRun), the paths of the values not known yet
// (returned apart: unknownOutputs turns them into the component's Unknown).
// The component reads its inputs at once, as the program reads its config: only those
// program.MayBeUnknown names may be unknown, and only in a preview (an update resolves every
// input before the component is read); the checks then read program.UnknownStandIn in their
// place. Any other unknown input is refused, naming it.
func configValues(props resource.PropertyMap, dryRun bool) (program.ComponentInputs, []string, error) {
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
		return program.ComponentInputs{}, nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	slices.Sort(secrets)
	slices.Sort(unknowns)
	return program.ComponentInputs{Values: values, Secrets: secrets}, unknowns, nil
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

// unknownOutputs gives each unknown path its Output from the component's inputs as the SDK hands
// them over: one Output per top-level input, unknown as a whole when anything in it is
// (pulumi/provider's constructInputsMap), with its dependencies and secrecy. A path's Output is
// its top-level input's, as text; being unknown, it never resolves to a value here.
func unknownOutputs(paths []string, inputs pulumi.Map) (map[string]pulumi.StringOutput, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out := map[string]pulumi.StringOutput{}
	for _, path := range paths {
		key, _, _ := strings.Cut(path, ".")
		key, _, _ = strings.Cut(key, "[")
		top, ok := inputs[key]
		if !ok {
			return nil, fmt.Errorf("input %s: the component's inputs hold no %s", path, key)
		}
		out[path] = pulumi.ToOutput(top).ApplyT(func(any) (string, error) {
			return "", fmt.Errorf("input %s was unknown in this preview, and an unknown input never resolves", path)
		}).(pulumi.StringOutput)
	}
	return out, nil
}
