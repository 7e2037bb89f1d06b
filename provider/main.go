// Command pulumi-resource-warmpool is the warmpool component package's plugin: it serves the
// AutoscaledWarmPool component (program.NewAutoscaledWarmPool) to Pulumi programs in any
// language, with the schema in schema.json.
package main

import (
	_ "embed"
	"fmt"
	"os"

	pprovider "github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// schema is the package's schema, generated from Pulumi.yaml (schema_test.go keeps it in step).
//
//go:embed schema.json
var schema []byte

func main() {
	if err := pprovider.Main(Name, func(host *pprovider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		return &server{host: host, schema: schema}, nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
