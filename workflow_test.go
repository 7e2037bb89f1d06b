package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type workflowStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

type workflowJob struct {
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	Permissions map[string]string `yaml:"permissions"`
	Steps       []workflowStep    `yaml:"steps"`
}

// TestPullRequestPreviewDoesNotWaitForTheSuite: the preview comment must not wait for the 40+ minute
// local-control-plane suite, and it runs with the preview role only.
func TestPullRequestPreviewDoesNotWaitForTheSuite(t *testing.T) {
	raw, err := os.ReadFile(".github/workflows/pulumi.yml")
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]workflowJob `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &wf))

	runs := func(job workflowJob) string {
		var all []string
		for _, s := range job.Steps {
			all = append(all, s.Run)
		}
		return strings.Join(all, "\n")
	}
	preview, ok := wf.Jobs["preview"]
	require.True(t, ok, "a preview job")
	assert.Nil(t, preview.Needs, "the preview runs in parallel with the tests, not after them")
	assert.Equal(t, "github.event_name == 'pull_request'", preview.If)
	assert.Equal(t, "write", preview.Permissions["id-token"], "credentials through OIDC")

	var roles []string
	for _, s := range preview.Steps {
		if strings.HasPrefix(s.Uses, "aws-actions/configure-aws-credentials") {
			roles = append(roles, s.With["role-to-assume"])
		}
		if strings.HasPrefix(s.Uses, "pulumi/actions") {
			assert.Equal(t, "preview", s.With["command"], "the PR job only previews")
		}
	}
	assert.Equal(t, []string{"${{ secrets.AWS_PREVIEW_ROLE_ARN }}"}, roles, "one set of AWS credentials: the preview role")

	unit, ok := wf.Jobs["unit"]
	require.True(t, ok, "a unit-test job")
	assert.Contains(t, runs(unit), "LOCALCLUSTER_SKIP=1 go test")
	assert.Contains(t, runs(unit), "go vet ./...")
	suite, ok := wf.Jobs["suite"]
	require.True(t, ok, "the full suite as its own job")
	assert.Contains(t, runs(suite), ".ci/run")
	for name, job := range wf.Jobs {
		if name != "preview" {
			assert.Empty(t, job.Permissions["id-token"], "%s gets no cloud credentials", name)
		}
	}
}
