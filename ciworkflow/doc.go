// Package ciworkflow holds the checks of the GitHub workflow (.github/workflows/pulumi.yml): what
// pull requests and pushes run, with which credentials. Its tests read the workflow file only, so
// they live apart from the program's package and do not link the Pulumi SDK.
package ciworkflow
