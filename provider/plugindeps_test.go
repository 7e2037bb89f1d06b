package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cloudSDKs are the module paths of the AWS and EKS SDKs. The plugin's component makes nothing in
// AWS, and compiling these was more than half of the plugin's cold build, which a team waits for
// at `pulumi package add` (docs/package.md).
var cloudSDKs = []string{"github.com/pulumi/pulumi-aws/", "github.com/pulumi/pulumi-eks/"}

func isCloudSDK(pkg string) bool {
	return slices.ContainsFunc(cloudSDKs, func(prefix string) bool { return strings.HasPrefix(pkg, prefix) })
}

// The plugin's build graph (go list -deps: its packages, not its tests') holds neither SDK. On a
// failure the message names the packages that import one: what makes AWS resources belongs in
// awscomponents, reached through program.Cloud.
func TestThePluginBuildsWithoutTheAWSAndEKSSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var packages, sdk, importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		packages = append(packages, pkg)
		if isCloudSDK(pkg) {
			sdk = append(sdk, pkg)
			continue
		}
		for _, imported := range fields[1:] {
			if isCloudSDK(imported) {
				importers = append(importers, pkg+" imports "+imported)
			}
		}
	}
	require.Contains(t, packages, "warmpool.local/warm-pool-autoscaling-keda/program", "the graph read is the plugin's")
	assert.Empty(t, sdk, "the plugin compiles the AWS or EKS SDK: %s", strings.Join(importers, "; "))
}
