package program

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// ComponentInputs are an AutoscaledWarmPool's inputs as its plugin hands them over. Values are in
// the form the CLI hands stack config over (scalars as text, lists and objects as JSON); Secrets
// are the paths the caller marked secret (template.env.API_KEY: kept secret; anywhere else:
// refused); Unknown, in a preview only, the paths whose values come from resources still to be
// created, each with the Output that carries it (Values holds UnknownStandIn there, which every
// check accepts).
type ComponentInputs struct {
	Values  map[string]string
	Secrets []string
	Unknown map[string]pulumi.StringOutput
}

// unknownPath is an input that may come from a resource still to be created: the exporter's image
// or the repository it is published to (an ECR repository of the same stack), and a template's
// image and env values (an image built by the stack, a key it generates). Anything else names
// resources, selects objects or sizes the pools, and must be a value when the component is read.
var unknownPath = regexp.MustCompile(`^(?:exporterImage|exporterImageRepository|(?:pools\[([0-9]+)\]\.)?template\.(?:image|env\.(.+)))$`)

// MayBeUnknown says whether the input at path may be unknown in a preview.
func MayBeUnknown(path string) bool { return unknownPath.MatchString(path) }

// UnknownInputs describes the inputs that may be unknown in a preview, for messages.
const UnknownInputs = "exporterImage, exporterImageRepository, and a template's image and env values (template.image, template.env.NAME, pools[i].template.image, pools[i].template.env.NAME)"

// UnknownStandIn is what the checks read in place of an unknown input at path: an image reference
// or a repository they accept, or an empty env value. The value itself is checked by `pulumi up`,
// which reads it known, with the same rules.
func UnknownStandIn(path string) string {
	switch {
	case path == "exporterImageRepository":
		return "registry.invalid/not-known-until-update"
	case path == "exporterImage" || strings.HasSuffix(path, "template.image"):
		return "registry.invalid/not-known-until-update:preview"
	}
	return ""
}

// awaitUnknown puts each unknown input's Output where the stand-in was: the template's image or
// env value, the exporter's image or repository. An unknown input anywhere else is refused,
// naming it.
func (c *Config) awaitUnknown(unknown map[string]pulumi.StringOutput) []string {
	var errs []string
	for _, path := range slices.Sorted(maps.Keys(unknown)) {
		out := unknown[path]
		m := unknownPath.FindStringSubmatch(path)
		switch {
		case m == nil:
			errs = append(errs, fmt.Sprintf("%s is not known yet (it comes from a resource this deployment has still to create), and only %s may be: pass %s as a value", path, UnknownInputs, path))
			continue
		case path == "exporterImage":
			c.unknownExporterImage = &out
			continue
		case path == "exporterImageRepository":
			c.unknownExporterRepository = &out
			continue
		}
		agent := c.templateAgent(m[1])
		if agent == nil {
			continue // an entry that did not read, reported as such
		}
		if agent.Unknown == nil {
			agent.Unknown = map[string]pulumi.StringInput{}
		}
		if m[2] != "" {
			agent.Unknown["env."+m[2]] = out
		} else {
			agent.Unknown["image"] = out
		}
	}
	return errs
}

// warnUnknown says, on the component, which inputs a preview could not check.
func warnUnknown(ctx *pulumi.Context, c *AutoscaledWarmPool, unknown map[string]pulumi.StringOutput) error {
	if len(unknown) == 0 {
		return nil
	}
	return ctx.Log.Warn(fmt.Sprintf("the preview could not check %s: not known until the resource it comes from is created; "+
		"`pulumi up` checks it with the same rules before it creates any of the component's resources", strings.Join(slices.Sorted(maps.Keys(unknown)), ", ")), &pulumi.LogArgs{Resource: c})
}
