package program

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/exporterimage"
	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

const (
	typeECRRepository      = "aws:ecr/repository:Repository"
	typeECRLifecyclePolicy = "aws:ecr/lifecyclePolicy:LifecyclePolicy"
	tokenECRAuthorization  = "aws:ecr/getAuthorizationToken:getAuthorizationToken"
)

// exporterContainer is the exporter Deployment's container and pod spec, as plain values.
func exporterContainer(t *testing.T, rec *mockgraph.Recorder) (container, pod map[string]any) {
	t.Helper()
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	spec, _ := dep.Path("spec", "template", "spec")
	pod = plainValue(spec).(map[string]any)
	return pod["containers"].([]any)[0].(map[string]any), pod
}

func builtDigest(t *testing.T, platform string) string {
	t.Helper()
	b, err := exporterimage.Build(context.Background(), platform)
	require.NoError(t, err)
	return b.Digest.String()
}

// With exporterImage unset, a create-mode stack runs no compiler: it builds the exporter's
// image, pushes it to an ECR repository of its own with ECR's token, and the pods pull it by digest.
func TestCreateModeBuildsTheExporterImageIntoItsOwnECRRepository(t *testing.T) {
	rec := mustRunProgram(t, map[string]string{"clusterName": "team-a", "tags": `{"cost-center":"42"}`})
	repo := mustFind(t, rec, typeECRRepository, "exporter-image")
	assert.Equal(t, "team-a/claim-exporter", inputStr(t, repo, "name"))
	assert.Equal(t, "IMMUTABLE", inputStr(t, repo, "imageTagMutability"))
	assert.True(t, inputBool(t, repo, "imageScanningConfiguration", "scanOnPush"))
	assert.True(t, inputBool(t, repo, "forceDelete"), "destroy takes the pushed images with the repository")
	assert.Equal(t, "42", inputStr(t, repo, "tags", "cost-center"))

	policy := mustFind(t, rec, typeECRLifecyclePolicy, "exporter-image")
	var rules struct {
		Rules []struct {
			Selection map[string]any `json:"selection"`
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(inputStr(t, policy, "policy")), &rules))
	require.Len(t, rules.Rules, 2)
	assert.Equal(t, "untagged", rules.Rules[0].Selection["tagStatus"])
	assert.Equal(t, []any{exporterimage.TagPrefix}, rules.Rules[1].Selection["tagPrefixList"], "the kept images are the ones the stack tags")

	c, pod := exporterContainer(t, rec)
	digest := builtDigest(t, exporterimage.DefaultPlatform)
	assert.Equal(t, rec.RegistryHost()+"/team-a/claim-exporter@"+digest, c["image"])
	assert.Nil(t, c["command"], "the image runs its own entrypoint: no `go run`")
	assert.Empty(t, rec.Find(typeConfigMap, "claim-exporter-src"), "no source shipped to the pods")
	assert.Equal(t, map[string]any{"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}, pod["nodeSelector"])
	assert.Equal(t, "50m", c["resources"].(map[string]any)["requests"].(map[string]any)["cpu"])

	// The push happened, with ECR's token, before the Deployment was given the reference.
	assert.Contains(t, rec.PushedManifests(), "team-a/claim-exporter/manifests/"+exporterimage.TagPrefix+strings.TrimPrefix(digest, "sha256:")[:16])
	assert.Len(t, rec.Invokes(tokenECRAuthorization), 1)
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	assert.True(t, dep.DependsOn(repo), "destroy deletes the Deployment before the repository its image is in")
}

// A preview builds (it shows the digest an up would push) and pushes nothing, asking ECR for no token.
func TestPreviewBuildsTheExporterImageAndPushesNothing(t *testing.T) {
	t.Setenv("PULUMI_DRY_RUN", "true")
	rec, err := runProgram(t, map[string]string{"clusterName": "team-a"})
	require.NoError(t, err)
	c, _ := exporterContainer(t, rec)
	assert.Equal(t, rec.RegistryHost()+"/team-a/claim-exporter@"+builtDigest(t, exporterimage.DefaultPlatform), c["image"])
	assert.Empty(t, rec.PushedManifests())
	assert.Empty(t, rec.Invokes(tokenECRAuthorization))
}

// A repository of the team's own is pushed to with the docker config's credentials (what
// `docker login` or a credential helper leaves), on an existing cluster as on a new one.
func TestExporterImageRepositoryIsPushedToWithTheDockerConfigsCredentials(t *testing.T) {
	rec := mockgraph.New()
	t.Cleanup(rec.Close)
	host := rec.RegistryHost()
	dockerConfig := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(mockgraph.MockECRUser + ":" + mockgraph.MockECRPassword))
	require.NoError(t, os.WriteFile(filepath.Join(dockerConfig, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600))
	t.Setenv("DOCKER_CONFIG", dockerConfig)

	repository := host + "/platform/claim-exporter"
	require.NoError(t, runProgramOn(t, rec, withConfig(map[string]string{"exporterImageRepository": repository, "exporterImagePlatform": "linux/arm64"})))
	c, pod := exporterContainer(t, rec)
	digest := builtDigest(t, "linux/arm64")
	assert.Equal(t, repository+"@"+digest, c["image"])
	assert.Equal(t, map[string]any{"kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64"}, pod["nodeSelector"])
	assert.Contains(t, rec.PushedManifests(), "platform/claim-exporter/manifests/"+exporterimage.TagPrefix+strings.TrimPrefix(digest, "sha256:")[:16])
	assert.Empty(t, rec.Find(typeECRRepository, ""), "a repository of the team's own: the stack makes none")

	// Without the credentials the push is refused and the up fails, saying where it pushed.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	other := mockgraph.New()
	t.Cleanup(other.Close)
	err := runProgramOn(t, other, withConfig(map[string]string{"exporterImageRepository": repository}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pushing the exporter's image to "+repository)
}

func TestExporterImageKeysAreRefusedWithTheirFix(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  map[string]string
		want string
	}{
		{"a prebuilt image and a repository", withConfig(map[string]string{"exporterImage": "ghcr.io/acme/claim-exporter:v1", "exporterImageRepository": "ghcr.io/acme/claim-exporter"}),
			"exporterImage (a prebuilt image) and exporterImageRepository (where the stack publishes the image it builds) are both set"},
		{"a repository without a registry", withConfig(map[string]string{"exporterImageRepository": "acme/claim-exporter"}),
			`exporterImageRepository "acme/claim-exporter" is not a registry's repository`},
		{"a repository with a tag", withConfig(map[string]string{"exporterImageRepository": "ghcr.io/acme/claim-exporter:v1"}),
			"write it as <registry>/<path> with neither tag nor digest"},
		{"a platform it cannot build", withConfig(map[string]string{"exporterImageRepository": "ghcr.io/acme/claim-exporter", "exporterImagePlatform": "windows/amd64"}),
			`exporterImagePlatform "windows/amd64" is not one the exporter's image is built for; use one of linux/amd64, linux/arm64`},
		{"a platform beside a prebuilt image", withConfig(map[string]string{"exporterImage": "ghcr.io/acme/claim-exporter:v1", "exporterImagePlatform": "linux/arm64"}),
			"exporterImagePlatform applies to the image the stack builds, and this stack builds none (exporterImage names a prebuilt image)"},
		{"a platform on an existing cluster running the source", withConfig(map[string]string{"exporterImagePlatform": "linux/arm64"}),
			"this stack builds none (an existing cluster without exporterImageRepository runs the exporter's source)"},
		{"a cluster name ECR refuses", map[string]string{"clusterName": "team--a"},
			`an ECR repository named after the cluster, "team--a/claim-exporter", which is not a name ECR accepts`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, err := runProgram(t, c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, rec.All(), "nothing registered")
			assert.Empty(t, rec.PushedManifests())
		})
	}
}
