package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The plugin's cold build is what a team waits for at its first `pulumi package add`
// (docs/package.md), and most of it was packages its component never uses. These tests hold the
// plugin's build graph (go list -deps: its packages, not its tests') clear of them; a failure
// names the packages that import one.

// cloudSDKs are the module paths of the AWS and EKS SDKs: the component makes nothing in AWS.
// What does belongs in awscomponents, which the program reaches through program.Cloud.
var cloudSDKs = []string{"github.com/pulumi/pulumi-aws/", "github.com/pulumi/pulumi-eks/"}

// everyAPIGroup is pulumi-kubernetes' yaml/v2 package, which imports the package of every
// Kubernetes API group to read back a ConfigFile's resources; components/configfile.go registers
// the ConfigFile without it.
var everyAPIGroup = []string{"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/yaml/"}

func TestThePluginBuildsWithoutTheAWSAndEKSSDKs(t *testing.T) {
	assertPluginBuildsWithout(t, cloudSDKs, "the AWS or EKS SDK")
}

func TestThePluginBuildsWithoutEveryKubernetesAPIGroup(t *testing.T) {
	assertPluginBuildsWithout(t, everyAPIGroup, "pulumi-kubernetes' yaml package (every API group's)")
}

// assertPluginBuildsWithout fails if a package of the plugin's build graph starts with one of
// prefixes, naming what imports it.
func assertPluginBuildsWithout(t *testing.T, prefixes []string, what string) {
	t.Helper()
	banned := func(pkg string) bool {
		return slices.ContainsFunc(prefixes, func(prefix string) bool { return strings.HasPrefix(pkg, prefix) })
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var packages, found, importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		packages = append(packages, pkg)
		if banned(pkg) {
			found = append(found, pkg)
			continue
		}
		for _, imported := range fields[1:] {
			if banned(imported) {
				importers = append(importers, pkg+" imports "+imported)
			}
		}
	}
	require.Contains(t, packages, "warmpool.local/warm-pool-autoscaling-keda/program", "the graph read is the plugin's")
	assert.Empty(t, found, "the plugin compiles %s: %s", what, strings.Join(importers, "; "))
}
