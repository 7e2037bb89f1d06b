package exporterimage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TagPrefix starts every tag Publish gives an image (a registry's lifecycle rule keeps these).
const TagPrefix = "exporter-"

// Tag is the tag an image of digest is pushed under: derived from the digest, so pushing the same
// image again writes the same tag (a repository with immutable tags accepts the second up), and
// an image that differs gets a tag of its own.
func Tag(digest v1.Hash) string { return TagPrefix + digest.Hex[:16] }

// Reference is how pods pull an image of digest from repository: by digest, so what runs is what
// was built, whatever a tag later points at.
func Reference(repository string, digest v1.Hash) string {
	return repository + "@" + digest.String()
}

// ParseRepository checks repository is a registry and a repository path with neither tag nor
// digest ("123456789012.dkr.ecr.us-west-2.amazonaws.com/team/claim-exporter",
// "127.0.0.1:5000/claim-exporter").
func ParseRepository(repository string) (name.Repository, error) {
	repo, err := name.NewRepository(repository, name.StrictValidation)
	if err != nil {
		return name.Repository{}, err
	}
	if repo.RegistryStr() == name.DefaultRegistry && !hasRegistry(repository) {
		return name.Repository{}, fmt.Errorf("%q names no registry: give the registry's host first, e.g. 123456789012.dkr.ecr.us-west-2.amazonaws.com/claim-exporter", repository)
	}
	return repo, nil
}

// hasRegistry says the first path component is a host, as the reference grammar reads it.
func hasRegistry(repository string) bool {
	first, _, found := strings.Cut(repository, "/")
	return found && (first == "localhost" || strings.ContainsAny(first, ".:"))
}

// KeychainAuth is the credential the machine running `pulumi up` holds for repository's registry:
// the docker config ($DOCKER_CONFIG or ~/.docker/config.json), its credential helpers included;
// anonymous when it holds none.
func KeychainAuth(repository string) (authn.Authenticator, error) {
	repo, err := ParseRepository(repository)
	if err != nil {
		return nil, err
	}
	return authn.DefaultKeychain.Resolve(repo)
}

// BasicAuth is a user name and password the registry gave (ECR's authorization token).
func BasicAuth(user, password string) authn.Authenticator {
	return &authn.Basic{Username: user, Password: password}
}

// Publish pushes b to repository under Tag(b.Digest) and returns its Reference. An image already
// there under that tag is left as it is (nothing is written).
func Publish(ctx context.Context, b *Built, repository string, auth authn.Authenticator) (string, error) {
	repo, err := ParseRepository(repository)
	if err != nil {
		return "", err
	}
	tag := repo.Tag(Tag(b.Digest))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth)}
	if desc, err := remote.Head(tag, opts...); err == nil {
		if desc.Digest == b.Digest {
			return Reference(repository, b.Digest), nil
		}
		return "", fmt.Errorf("%s already holds %s, not this build's %s: the tag is derived from the digest, so something else wrote it; delete that tag or publish to another repository", tag, desc.Digest, b.Digest)
	}
	if err := remote.Write(tag, b.Image, opts...); err != nil {
		return "", fmt.Errorf("pushing the exporter's image to %s: %w", repository, err)
	}
	return Reference(repository, b.Digest), nil
}
