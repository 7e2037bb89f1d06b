package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// configValues turns a component's inputs into what the program's config reader reads, the
// form the CLI hands stack config over in: scalars as text, lists and objects as JSON, and the
// paths of the values the caller marked secret (pools[0].template.env.API_KEY), which the
// component keeps secret or refuses. An input that is not known yet is refused, naming it: the
// component reads its inputs at once, as the program reads its config, so they must be values,
// not outputs of resources still to come.
func configValues(props resource.PropertyMap) (map[string]string, []string, error) {
	values := map[string]string{}
	var errs, secrets []string
	for _, k := range props.StableKeys() {
		key := string(k)
		v, err := plain(props[k], key, &secrets)
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
		return nil, nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	slices.Sort(secrets)
	return values, secrets, nil
}

// plain is a property value as plain Go values; configValues writes all but text as JSON
// (2 as "2", true as "true"), as the CLI does. The path of each secret goes into secrets.
func plain(v resource.PropertyValue, path string, secrets *[]string) (any, error) {
	switch {
	case v.IsSecret():
		*secrets = append(*secrets, path)
		return plain(v.SecretValue().Element, path, secrets)
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return nil, unknown(path)
		}
		if o.Secret {
			*secrets = append(*secrets, path)
		}
		return plain(o.Element, path, secrets)
	case v.IsComputed():
		return nil, unknown(path)
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
			p, err := plain(e, fmt.Sprintf("%s[%d]", path, i), secrets)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	case v.IsObject():
		out := map[string]any{}
		for k, e := range v.ObjectValue() {
			p, err := plain(e, path+"."+string(k), secrets)
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

func unknown(path string) error {
	return fmt.Errorf("input %s is not known yet (it comes from a resource this deployment has still to create); the component reads its inputs at once, as the program reads its stack config, so pass a value", path)
}
