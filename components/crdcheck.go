package components

import (
	"fmt"

	apiextensionsv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/internals"
)

// requireCRDs reads each CRD (a read, never a managed resource: destroy only forgets it) and waits
// for the answers, so adopting a missing install fails before anything depending on it is created.
func requireCRDs(ctx *pulumi.Context, parent pulumi.Resource, product, howToFix string, names ...string) error {
	reads := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, n := range names {
		crd, err := apiextensionsv1.GetCustomResourceDefinition(ctx, n, pulumi.ID(n), nil, pulumi.Parent(parent))
		if err != nil {
			return err
		}
		reads = append(reads, crd)
	}
	for i, crd := range reads {
		if _, err := internals.UnsafeAwaitOutput(ctx.Context(), crd.ID()); err != nil {
			return explain(ctx, parent, fmt.Errorf("%s is not installed on this cluster: CustomResourceDefinition %s was not found (%v). "+
				"It is a shared install that adopt mode only reads; %s", product, names[i], err, howToFix))
		}
	}
	return nil
}

// explain logs err on the component before returning it. A failed read also fails the engine RPC,
// and the Go SDK then reports that RPC error instead of the program's; the log line is how the
// user still sees what is missing and how to fix it.
func explain(ctx *pulumi.Context, on pulumi.Resource, err error) error {
	_ = ctx.Log.Error(err.Error(), &pulumi.LogArgs{Resource: on})
	return err
}
