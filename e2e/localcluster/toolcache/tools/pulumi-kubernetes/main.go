// Command pulumi-resource-kubernetes is the Pulumi Kubernetes provider, built from
// its published module. The upstream command embeds a schema that its generate.go
// derives from schema.json at release time and that the module does not ship; the
// local control plane's builder writes the two *-embed.json files beside this file
// (see e2e/localcluster/build.go) before it builds, exactly as generate.go would.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
