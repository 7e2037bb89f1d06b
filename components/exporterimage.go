package components

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecr"
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
	Repository        string
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
	// Repository is the ECR repository the stack made (nil with a repository of the team's own).
	Repository *ecr.Repository
}

// ecrRepositoryName is ECR's grammar for a repository name (CreateRepository's API reference).
var ecrRepositoryName = regexp.MustCompile(`^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$`)

// ValidECRRepositoryName says whether name is one ECR accepts (2..256 characters of its grammar).
func ValidECRRepositoryName(name string) bool {
	return len(name) >= 2 && len(name) <= 256 && ecrRepositoryName.MatchString(name)
}

// ecrLifecyclePolicy keeps what a rollback needs and drops what nothing runs: the 20 newest
// images the stack pushed (every tag it writes starts with exporterimage.TagPrefix), and a push
// that never got its tag (an interrupted up) after a day. A running image is always tagged.
var ecrLifecyclePolicy = func() string {
	b, err := json.Marshal(map[string]any{"rules": []map[string]any{
		{"rulePriority": 1, "description": "untagged images: layers of a push that never finished",
			"selection": map[string]any{"tagStatus": "untagged", "countType": "sinceImagePushed", "countUnit": "days", "countNumber": 1},
			"action":    map[string]any{"type": "expire"}},
		{"rulePriority": 2, "description": "the 20 newest exporter images: a rollback's reach",
			"selection": map[string]any{"tagStatus": "tagged", "tagPrefixList": []string{exporterimage.TagPrefix}, "countType": "imageCountMoreThan", "countNumber": 20},
			"action":    map[string]any{"type": "expire"}},
	}})
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// NewExporterImage builds the exporter's image now (so a build error fails the preview, with
// nothing created) and publishes it once the repository is known, outside a preview.
func NewExporterImage(ctx *pulumi.Context, name string, args *ExporterImageArgs, opts ...pulumi.ResourceOption) (*ExporterImage, error) {
	e := &ExporterImage{Platform: args.Platform}
	if err := ctx.RegisterComponentResource(ExporterImageType, args.Scope.Name(name), e, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	built, err := exporterimage.Build(ctx.Context(), args.Platform)
	if err != nil {
		return nil, err
	}
	// A preview reads no credential and pushes nothing: it shows the digest an up would push.
	preview := func(repository string) string { return exporterimage.Reference(repository, built.Digest) }
	if args.Repository != "" {
		e.Reference = pulumi.String(args.Repository).ToStringOutput().ApplyT(func(repository string) (string, error) {
			if ctx.DryRun() {
				return preview(repository), nil
			}
			auth, err := exporterimage.KeychainAuth(repository)
			if err != nil {
				return "", fmt.Errorf("exporterImageRepository %q: %w", repository, err)
			}
			return exporterimage.Publish(context.Background(), built, repository, auth)
		}).(pulumi.StringOutput)
		return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
	}
	if !ValidECRRepositoryName(args.ECRRepositoryName) {
		return nil, fmt.Errorf("ECR repository name %q is not one ECR accepts", args.ECRRepositoryName)
	}
	repo, err := ecr.NewRepository(ctx, args.Scope.Name(name), &ecr.RepositoryArgs{
		Name: pulumi.String(args.ECRRepositoryName),
		// A tag is written once: what a tag named is what it names (Publish's tags are derived
		// from the digest, so a second up of the same source writes nothing).
		ImageTagMutability:         pulumi.String("IMMUTABLE"),
		ImageScanningConfiguration: &ecr.RepositoryImageScanningConfigurationArgs{ScanOnPush: pulumi.Bool(true)},
		// destroy deletes the images the stack pushed with their repository: nothing is left.
		ForceDelete: pulumi.Bool(true),
		Tags:        pulumi.ToStringMap(args.Tags),
	}, args.Scope.Opts(name, pulumi.Parent(e))...)
	if err != nil {
		return nil, err
	}
	if _, err := ecr.NewLifecyclePolicy(ctx, args.Scope.Name(name), &ecr.LifecyclePolicyArgs{
		Repository: repo.Name, Policy: pulumi.String(ecrLifecyclePolicy),
	}, args.Scope.Opts(name, pulumi.Parent(e))...); err != nil {
		return nil, err
	}
	e.Repository = repo
	if ctx.DryRun() {
		e.Reference = repo.RepositoryUrl.ApplyT(preview).(pulumi.StringOutput)
		return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
	}
	// ECR's token (12 hours) for the registry the repository is in; a secret, the reference it buys is not.
	token := ecr.GetAuthorizationTokenOutput(ctx, ecr.GetAuthorizationTokenOutputArgs{RegistryId: repo.RegistryId.ToStringPtrOutput()}, pulumi.Parent(e))
	e.Reference = pulumi.Unsecret(pulumi.All(repo.RepositoryUrl, token.UserName(), token.Password()).ApplyT(func(v []any) (string, error) {
		return exporterimage.Publish(context.Background(), built, v[0].(string), exporterimage.BasicAuth(v[1].(string), v[2].(string)))
	})).(pulumi.StringOutput)
	return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
}
