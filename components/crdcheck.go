package components

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/internals"
)

// RequiredCRD is a CustomResourceDefinition an adopted install must have, and the API version
// of it this stack reads and writes.
type RequiredCRD struct {
	Name    string // e.g. scaledobjects.keda.sh
	Version string // e.g. v1alpha1; it must be served
}

// requireCRDs reads each CRD (a read, never a managed resource: destroy only forgets it) and waits
// for the answers, so adopting a missing install, or one too old or too new to serve the version
// the stack uses, fails before anything depending on it is created. It returns the reads.
func requireCRDs(ctx *pulumi.Context, scope Scope, parent pulumi.Resource, product, howToFix string, crds ...RequiredCRD) ([]pulumi.Resource, error) {
	reads := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds))
	for _, c := range crds {
		// A read takes no alias: the engine forgets a read a stack no longer makes, touching nothing.
		crd, err := apiextensionsv1.GetCustomResourceDefinition(ctx, scope.Name(c.Name), pulumi.ID(c.Name), nil, pulumi.Parent(parent))
		if err != nil {
			return nil, err
		}
		reads = append(reads, crd)
	}
	for i, crd := range reads {
		need := crds[i]
		if _, err := internals.UnsafeAwaitOutput(ctx.Context(), crd.ID()); err != nil {
			return nil, Explain(ctx, parent, fmt.Errorf("%s is not installed on this cluster: CustomResourceDefinition %s was not found (%v). "+
				"It is a shared install that adopt mode only reads; %s", product, need.Name, err, howToFix))
		}
		versions, err := internals.UnsafeAwaitOutput(ctx.Context(), crd.Spec.Versions())
		if err != nil {
			return nil, Explain(ctx, parent, fmt.Errorf("reading the versions of CustomResourceDefinition %s: %w", need.Name, err))
		}
		if !versions.Known {
			continue // a preview without the cluster's answer; the update checks again
		}
		list, _ := versions.Value.([]apiextensionsv1.CustomResourceDefinitionVersion)
		var served []string
		for _, v := range list {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		if !slices.Contains(served, need.Version) {
			servedText := "none"
			if len(served) > 0 {
				servedText = strings.Join(served, ", ")
			}
			return nil, Explain(ctx, parent, fmt.Errorf("%s on this cluster does not serve the version this stack uses: CustomResourceDefinition %s serves %s, "+
				"but the stack needs %s. It is a shared install that adopt mode only reads, so upgrade it to a release that serves %s, or %s",
				product, need.Name, servedText, need.Version, need.Version, howToFix))
		}
	}
	out := make([]pulumi.Resource, len(reads))
	for i, r := range reads {
		out[i] = r
	}
	return out, nil
}

// Explain logs err on the component before returning it. A failed read also fails the engine RPC,
// and the Go SDK then reports that RPC error instead of the program's; the log line is how the
// user still sees what is missing and how to fix it.
func Explain(ctx *pulumi.Context, on pulumi.Resource, err error) error {
	_ = ctx.Log.Error(err.Error(), &pulumi.LogArgs{Resource: on})
	return err
}
