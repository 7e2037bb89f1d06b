package awscomponents

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecr"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
)

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

// NewECRExporterImage is components.NewExporterImage publishing to an ECR repository the stack
// creates, named args.ECRRepositoryName and tagged args.Tags: create mode's, when the stack names
// no repository of the team's own.
func NewECRExporterImage(ctx *pulumi.Context, name string, args *components.ExporterImageArgs, opts ...pulumi.ResourceOption) (*components.ExporterImage, error) {
	e, built, err := components.BuildExporterImage(ctx, name, args, opts...)
	if err != nil {
		return nil, err
	}
	if !components.ValidECRRepositoryName(args.ECRRepositoryName) {
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
	if ctx.DryRun() {
		// A preview reads no credential and pushes nothing: it shows the digest an up would push.
		e.Reference = repo.RepositoryUrl.ApplyT(func(repository string) string {
			return exporterimage.Reference(repository, built.Digest)
		}).(pulumi.StringOutput)
		return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
	}
	// ECR's token (12 hours) for the registry the repository is in; a secret, the reference it buys is not.
	token := ecr.GetAuthorizationTokenOutput(ctx, ecr.GetAuthorizationTokenOutputArgs{RegistryId: repo.RegistryId.ToStringPtrOutput()}, pulumi.Parent(e))
	e.Reference = pulumi.Unsecret(pulumi.All(repo.RepositoryUrl, token.UserName(), token.Password()).ApplyT(func(v []any) (string, error) {
		return exporterimage.Publish(context.Background(), built, v[0].(string), exporterimage.BasicAuth(v[1].(string), v[2].(string)))
	})).(pulumi.StringOutput)
	return e, ctx.RegisterResourceOutputs(e, pulumi.Map{"reference": e.Reference})
}
