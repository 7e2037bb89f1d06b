package program

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
	"warmpool.local/warm-pool-autoscaling-keda/exporter"
	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
)

// ecrRepositorySuffix ends the name of the ECR repository a create-mode stack publishes the
// exporter's image to: "<cluster name, lower case>/claim-exporter".
const ecrRepositorySuffix = "/claim-exporter"

// buildsExporterImage says the stack builds and publishes the exporter's image: to the
// repository it names, or in create mode to an ECR repository of its own. Otherwise the exporter
// runs a prebuilt image (exporterImage) or, in existing mode, its source with `go run`.
func (c *Config) buildsExporterImage() bool {
	return c.ExporterImage == "" && (c.ExporterImageRepository != "" || c.ClusterMode == components.ModeCreate)
}

func (c *Config) exporterImagePlatform() string {
	if c.ExporterImagePlatform == "" {
		return exporterimage.DefaultPlatform
	}
	return c.ExporterImagePlatform
}

func (c *Config) ecrRepositoryName() string {
	return strings.ToLower(c.ClusterName) + ecrRepositorySuffix
}

func (c *Config) validateExporterImage(add func(string, ...any)) {
	if c.ExporterImage != "" && c.ExporterImageRepository != "" {
		add("exporterImage (a prebuilt image) and exporterImageRepository (where the stack publishes the image it builds) are both set; keep one: "+
			"`pulumi config rm exporterImage` to have the stack build it, or `pulumi config rm exporterImageRepository` to run %s", c.ExporterImage)
	}
	if c.ExporterImageRepository != "" {
		if _, err := exporterimage.ParseRepository(c.ExporterImageRepository); err != nil {
			add("exporterImageRepository %q is not a registry's repository (%v); write it as <registry>/<path> with neither tag nor digest, "+
				"e.g. 123456789012.dkr.ecr.us-west-2.amazonaws.com/team/claim-exporter", c.ExporterImageRepository, err)
		}
	}
	if c.ExporterImagePlatform != "" {
		switch {
		case !exporterimage.ValidPlatform(c.ExporterImagePlatform):
			add("exporterImagePlatform %q is not one the exporter's image is built for; use one of %s", c.ExporterImagePlatform, strings.Join(exporterimage.Platforms, ", "))
		case !c.buildsExporterImage():
			add("exporterImagePlatform applies to the image the stack builds, and this stack builds none (%s); remove it (`pulumi config rm exporterImagePlatform`)", c.noBuildReason())
		}
	}
	if c.ExporterImage == "" && c.ExporterImageRepository == "" && c.ClusterMode == components.ModeCreate && !components.ValidECRRepositoryName(c.ecrRepositoryName()) {
		add("the exporter's image goes to an ECR repository named after the cluster, %q, which is not a name ECR accepts (lower-case letters and digits, "+
			"single '.', '_' or '-' between them); set clusterName to such a name, or exporterImageRepository to a repository of your own", c.ecrRepositoryName())
	}
}

func (c *Config) noBuildReason() string {
	if c.ExporterImage != "" {
		return "exporterImage names a prebuilt image"
	}
	return "an existing cluster without exporterImageRepository runs the exporter's source"
}

// exporterCode is how the exporter's code reaches its pods: an image (ClaimExporterArgs.Image,
// with the platform it was built for when the stack built it) or its source for `go run`.
type exporterCode struct {
	image    pulumi.StringInput
	platform string
	source   map[string]string
}

// newExporterCode builds and publishes the exporter's image when the stack does, and says so when
// the exporter will compile itself in every pod instead.
func newExporterCode(ctx *pulumi.Context, cfg *Config, on placement) (exporterCode, error) {
	switch {
	case cfg.unknownExporterImage != nil:
		return exporterCode{image: *cfg.unknownExporterImage}, nil
	case cfg.ExporterImage != "":
		return exporterCode{image: pulumi.String(cfg.ExporterImage)}, nil
	case cfg.buildsExporterImage():
		args := &components.ExporterImageArgs{
			Repository: cfg.ExporterImageRepository, ECRRepositoryName: cfg.ecrRepositoryName(),
			Platform: cfg.exporterImagePlatform(), Tags: cfg.AWSTags(), Scope: on.scope,
		}
		if cfg.unknownExporterRepository != nil {
			args.RepositoryOutput = *cfg.unknownExporterRepository
		}
		newImage := components.NewExporterImage
		if cfg.ExporterImageRepository == "" {
			// create mode's own ECR repository (buildsExporterImage)
			if on.cloud == nil {
				return exporterCode{}, fmt.Errorf("the exporter's image goes to an ECR repository of the stack's own, which only the program's own cluster has")
			}
			newImage = on.cloud.NewECRExporterImage
		}
		img, err := newImage(ctx, "exporter-image", args)
		if err != nil {
			return exporterCode{}, err
		}
		return exporterCode{image: img.Reference, platform: img.Platform}, nil
	}
	source, err := exporter.PodSource()
	if err != nil {
		return exporterCode{}, err
	}
	if err := ctx.Log.Warn("the exporter runs its source with `go run` in every pod (about a minute to its first count, and a compiler in the pod): "+
		"for the demo and local use; set exporterImageRepository to have the stack build and publish its image", nil); err != nil {
		return exporterCode{}, err
	}
	return exporterCode{source: source}, nil
}
