package ciworkflow

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type workflowStep struct {
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

type workflowJob struct {
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	Permissions map[string]string `yaml:"permissions"`
	Steps       []workflowStep    `yaml:"steps"`
}

func readWorkflow(t *testing.T) map[string]workflowJob {
	t.Helper()
	raw, err := os.ReadFile("../.github/workflows/pulumi.yml")
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]workflowJob `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &wf))
	return wf.Jobs
}

// TestPullRequestPreviewDoesNotWaitForTheSuite: the preview comment must not wait for the 40+ minute
// local-control-plane suite, and it runs with the preview role only.
func TestPullRequestPreviewDoesNotWaitForTheSuite(t *testing.T) {
	wf := struct{ Jobs map[string]workflowJob }{readWorkflow(t)}

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

// TestPreviewWorksOnAFreshStackAndSkipsForks: the first pull request previews a stack nobody has
// created yet (upsert: in the Pulumi backend only; a preview creates nothing on AWS), and pull
// requests that get no secrets or OIDC token (forks, Dependabot) skip the preview with a notice.
func TestPreviewWorksOnAFreshStackAndSkipsForks(t *testing.T) {
	preview := readWorkflow(t)["preview"]
	require.NotEmpty(t, preview.Steps)
	gate := preview.Steps[0]
	require.Equal(t, "gate", gate.ID, "the first step decides whether this pull request can be previewed")
	assert.Empty(t, gate.Uses, "the gate checks out nothing and holds no credentials")
	assert.Equal(t, "${{ github.event.pull_request.head.repo.full_name != github.repository }}", gate.Env["FORK"])
	assert.Equal(t, "${{ github.actor }}", gate.Env["ACTOR"])
	assert.Contains(t, gate.Run, `if [ "$FORK" = true ]; then`)
	assert.Contains(t, gate.Run, `if [ "$ACTOR" = "dependabot[bot]" ]; then`)
	assert.Equal(t, 2, strings.Count(gate.Run, "::notice title=pulumi preview skipped::"), "both skips say why")
	assert.Equal(t, 2, strings.Count(gate.Run, `echo "run=false" >> "$GITHUB_OUTPUT"`))
	assert.Contains(t, gate.Run, "::error title=pulumi preview is not set up::", "a pull request of this repository without the secrets fails, naming them")
	for env, secret := range map[string]string{"HAS_PULUMI_TOKEN": "PULUMI_ACCESS_TOKEN", "HAS_PREVIEW_ROLE": "AWS_PREVIEW_ROLE_ARN"} {
		assert.Equal(t, "${{ secrets."+secret+" != '' }}", gate.Env[env])
		assert.Contains(t, gate.Run, `[ "$`+env+`" = true ] || missing="$missing `+secret+`"`)
	}
	for _, s := range preview.Steps[1:] {
		assert.Equal(t, "steps.gate.outputs.run == 'true'", s.If, "step %q must not run when the gate skips", s.Name+s.Uses)
	}

	var pulumiSteps []workflowStep
	for _, s := range preview.Steps {
		if strings.HasPrefix(s.Uses, "pulumi/actions") {
			pulumiSteps = append(pulumiSteps, s)
		}
	}
	require.Len(t, pulumiSteps, 1)
	assert.Equal(t, "preview", pulumiSteps[0].With["command"])
	assert.Equal(t, "true", pulumiSteps[0].With["upsert"], "a stack that does not exist yet is created in the backend, not reported missing")
	assert.Empty(t, pulumiSteps[0].With["refresh"], "no refresh: a fresh stack has nothing to read")
}

// TestPinnedDownloadsAreCheckedInCI: a job looks up the pinned KEDA chart and agent-sandbox manifest
// with the command users run, on every push and pull request, without credentials.
func TestPinnedDownloadsAreCheckedInCI(t *testing.T) {
	pins, ok := readWorkflow(t)["pins"]
	require.True(t, ok, "a pins job")
	assert.Empty(t, pins.If, "on every push and pull request")
	assert.Nil(t, pins.Needs)
	assert.Empty(t, pins.Permissions, "no cloud credentials, no write access")
	var runs []string
	for _, s := range pins.Steps {
		runs = append(runs, s.Run)
	}
	assert.Contains(t, runs, "go run ./checkpins")
}
