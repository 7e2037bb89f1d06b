package components

import (
	"context"
	"fmt"
	"regexp"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
)

// ExporterImageType is the component's type token.
const ExporterImageType = "warmpool:index:ExporterImage"

// ExporterImageArgs says where the exporter's image, built from the source in this program, is
// published.
type ExporterImageArgs struct {
	// Repository is a repository of the team's own ("<registry>/<path>"), pushed to with the
	// credentials of the machine running `pulumi up` (its docker config and credential helpers).
	// Empty: an ECR repository the stack creates, named ECRRepositoryName (create mode).
	Repository string
	// RepositoryOutput, when set, is Repository as an Output (one a preview does not know yet:
	// an ECR repository the same stack creates); Repository then holds a stand-in.
	RepositoryOutput  pulumi.StringInput
	ECRRepositoryName string
	// Platform the image is built for (exporterimage.Platforms); the pods are kept to its nodes.
	Platform string
	// Tags on the ECR repository.
	Tags  map[string]string
	Scope Scope
}

// ExporterImage is the exporter's image as pods pull it: by digest.
type ExporterImage struct {
	pulumi.ResourceState

	// Reference is "<repository>@sha256:<digest>". A preview builds (the same source gives the
	// same digest) and pushes nothing; an up pushes before any pod is given the reference.
	Reference pulumi.StringOutput
	// Platform is what the image runs on ("linux/amd64").
	Platform string
}

// ecrRepositoryName is ECR's grammar for a repository name (CreateRepository's API reference).
var ecrRepositoryName = regexp.MustCompile(`^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$`)

// ValidECRRepositoryName says whether name is one ECR accepts (2..256 characters of its grammar).
func ValidECRRepositoryName(name string) bool {
	return len(name) >= 2 && len(name) <= 256 && ecrRepositoryName.MatchString(name)
}

// NewExporterImage builds the exporter's image now (so a build error fails the preview, with
// nothing created) and publishes it to args.Repository, outside a preview; an ECR repository of
// the stack's own is awscomponents.NewECRExporterImage's.
func NewExporterImage(ctx *pulumi.Context, name string, args *ExporterImageArgs, opts ...pulumi.ResourceOption) (*ExporterImage, error) {
	e, built, err := BuildExporterImage(ctx, name, args, opts...)
	if err != nil {
		return nil, err
	}
	if args.Repository == "" {
		return nil, fmt.Errorf("exporter image %s: no repository to publish to", name)
	}
	repository := pulumi.StringInput(pulumi.String(args.Repository))
	if args.RepositoryOutput != nil {
		repository = args.RepositoryOutput
	}
	e.Reference = repository.ToStringOutput().ApplyT(func(repository string) (string, error) {
		if ctx.DryRun() {
			// A preview reads no credential and pushes nothing: it shows the digest an up would push.
			return exporterimage.Reference(repository, built.Digest), nil
		}
		auth, err := exporterimage.KeychainAuth(repository)
		if err != nil {
			return "", fmt.Errorf("exporterImageRepository %q: %w", repository, err)
		}
		return exporterimage.Publish(context.Background(), built, repository, auth)
	}).(pulumi.StringOutput)
	return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
}

// BuildExporterImage registers the component and builds the image; the caller publishes it and
// sets Reference.
func BuildExporterImage(ctx *pulumi.Context, name string, args *ExporterImageArgs, opts ...pulumi.ResourceOption) (*ExporterImage, *exporterimage.Built, error) {
	e := &ExporterImage{Platform: args.Platform}
	if err := ctx.RegisterComponentResource(ExporterImageType, args.Scope.Name(name), e, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, nil, err
	}
	built, err := exporterimage.Build(ctx.Context(), args.Platform)
	if err != nil {
		return nil, nil, err
	}
	return e, built, nil
}
