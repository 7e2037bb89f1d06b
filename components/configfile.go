package components

import (
	"reflect"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/utilities"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// configFileType is pulumi-kubernetes' remote component that applies a manifest.
const configFileType = "kubernetes:yaml/v2:ConfigFile"

// configFile is a kubernetes:yaml/v2:ConfigFile registered as yamlv2.NewConfigFile registers it
// (same type, inputs and provider version) without that Go package: to read back its resources
// output it imports every Kubernetes API group's package, about a third of the plugin's compile,
// and nothing here reads that output (a dependent depends on the component itself).
type configFile struct {
	pulumi.ResourceState
}

// configFileArgs are yamlv2.ConfigFileArgs, field for field, so they marshal as that package's do.
type configFileArgs struct {
	File           pulumi.StringInput
	ResourcePrefix pulumi.StringPtrInput
	SkipAwait      pulumi.BoolPtrInput
}

type configFileInputs struct {
	File           string  `pulumi:"file"`
	ResourcePrefix *string `pulumi:"resourcePrefix"`
	SkipAwait      *bool   `pulumi:"skipAwait"`
}

func (configFileArgs) ElementType() reflect.Type {
	return reflect.TypeOf((*configFileInputs)(nil)).Elem()
}

// newConfigFile applies the manifest at file (a path or URL).
func newConfigFile(ctx *pulumi.Context, name string, file string, opts ...pulumi.ResourceOption) (*configFile, error) {
	var c configFile
	err := ctx.RegisterRemoteComponentResource(configFileType, name, &configFileArgs{File: pulumi.String(file)}, &c,
		utilities.PkgResourceDefaultOpts(opts)...)
	if err != nil {
		return nil, err
	}
	return &c, nil
}
