package program

import (
	"regexp"
	"strings"
)

// The container image reference grammar the kubelet's runtime parses a pod's image with
// (github.com/distribution/reference, the grammar in its package documentation):
//
//	reference        := name [ ":" tag ] [ "@" digest ]
//	name             := [domain '/'] remote-name
//	domain           := host [':' port-number]
//	host             := domain-name | IPv4address | '[' IPv6address ']'
//	domain-name      := domain-component ['.' domain-component]*
//	domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//	remote-name      := path-component ['/' path-component]*
//	path-component   := alpha-numeric [separator alpha-numeric]*
//	alpha-numeric    := /[a-z0-9]+/
//	separator        := /[_.]|__|[-]+/
//	tag              := /[\w][\w.-]{0,127}/
//	digest           := algorithm ":" hex   (algorithm /[A-Za-z][A-Za-z0-9]*([+._-][A-Za-z][A-Za-z0-9]*)*/, hex /[0-9a-fA-F]{32,}/)
//
// The first component is the registry only when it contains '.' or ':' or is "localhost";
// otherwise it is part of the (lower-case) repository path, as docker.io/library images are.
var (
	imageDomain    = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$`)
	imagePath      = regexp.MustCompile(`^[a-z0-9]+(?:(?:[_.]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[_.]|__|-+)[a-z0-9]+)*)*$`)
	imageTag       = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	imageDigest    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[+._-][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
	digestHexBytes = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
)

// maxImageNameLength is the grammar's limit on the name (registry and repository, without tag or digest).
const maxImageNameLength = 255

// validImageReference reports whether ref parses as a container image reference: a repository
// (with an optional registry) and an optional tag and digest. "UPPER::", "Repo:tag", "x:" and
// "x@sha256:abc" do not.
func validImageReference(ref string) bool {
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		if !imageDigest.MatchString(digest) {
			return false
		}
		algorithm, hex, _ := strings.Cut(digest, ":")
		if want, known := digestHexBytes[algorithm]; known && len(hex) != want {
			return false
		}
	}
	// A tag follows the last ':' that is after the last '/' (a ':' before it is the registry's port).
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		if !imageTag.MatchString(name[i+1:]) {
			return false
		}
		name = name[:i]
	}
	if name == "" || len(name) > maxImageNameLength {
		return false
	}
	path := name
	if first, rest, found := strings.Cut(name, "/"); found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		if !imageDomain.MatchString(first) {
			return false
		}
		path = rest
	}
	return imagePath.MatchString(path)
}
