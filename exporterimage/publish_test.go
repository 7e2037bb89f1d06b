package exporterimage

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pushRegistry is a real registry on loopback that lets anyone read and only user:secret write,
// and counts the writes it accepted.
func pushRegistry(t *testing.T) (host string, writes *atomic.Int32) {
	t.Helper()
	writes = &atomic.Int32{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "secret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "push needs credentials", http.StatusUnauthorized)
				return
			}
			writes.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), writes
}

func TestPublishPushesByDigestOnceAndPodsPullThatDigest(t *testing.T) {
	host, writes := pushRegistry(t)
	b, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	repository := host + "/team/claim-exporter"
	ref, err := Publish(context.Background(), b, repository, BasicAuth("user", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	if want := repository + "@" + b.Digest.String(); ref != want {
		t.Errorf("reference %q, want %q", ref, want)
	}
	if writes.Load() == 0 {
		t.Fatal("the registry accepted no write")
	}
	// What a node pulls: the reference, anonymously.
	pulled, err := remote.Image(mustRef(t, ref), remote.WithAuth(authn.Anonymous))
	if err != nil {
		t.Fatalf("pulling %s: %v", ref, err)
	}
	if d, _ := pulled.Digest(); d != b.Digest {
		t.Errorf("pulled %s, built %s", d, b.Digest)
	}
	tagged, err := remote.Head(mustRef(t, repository+":"+Tag(b.Digest)))
	if err != nil || tagged.Digest != b.Digest {
		t.Errorf("tag %s: %v, %v; want %s", Tag(b.Digest), tagged, err, b.Digest)
	}

	before := writes.Load()
	if again, err := Publish(context.Background(), b, repository, BasicAuth("user", "secret")); err != nil || again != ref {
		t.Fatalf("second publish: %q, %v", again, err)
	}
	if n := writes.Load() - before; n != 0 {
		t.Errorf("the second publish of the same image wrote %d times, want none (immutable tags refuse a rewrite)", n)
	}
}

func TestPublishFailsWithoutTheRegistrysCredentials(t *testing.T) {
	host, writes := pushRegistry(t)
	b, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Publish(context.Background(), b, host+"/claim-exporter", BasicAuth("user", "wrong"))
	if err == nil || !strings.Contains(err.Error(), "pushing the exporter's image to "+host+"/claim-exporter") {
		t.Errorf("publish with a wrong password: %v", err)
	}
	if writes.Load() != 0 {
		t.Errorf("%d writes accepted", writes.Load())
	}
}

// A tag the digest names but another image holds is refused, not overwritten.
func TestPublishRefusesATagHoldingAnotherImage(t *testing.T) {
	host, _ := pushRegistry(t)
	amd, err := Build(context.Background(), DefaultPlatform)
	if err != nil {
		t.Fatal(err)
	}
	arm, err := Build(context.Background(), "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	repository := host + "/claim-exporter"
	squatted := mustRef(t, repository+":"+Tag(amd.Digest))
	if err := remote.Write(squatted, arm.Image, remote.WithAuth(BasicAuth("user", "secret"))); err != nil {
		t.Fatal(err)
	}
	_, err = Publish(context.Background(), amd, repository, BasicAuth("user", "secret"))
	if err == nil || !strings.Contains(err.Error(), "already holds "+arm.Digest.String()) {
		t.Errorf("publish over another image's tag: %v", err)
	}
}

func TestParseRepository(t *testing.T) {
	for _, ok := range []string{
		"123456789012.dkr.ecr.us-west-2.amazonaws.com/team/claim-exporter",
		"127.0.0.1:5000/claim-exporter",
		"localhost/claim-exporter",
		"ghcr.io/team/claim-exporter",
	} {
		if _, err := ParseRepository(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"claim-exporter",                 // no registry: docker.io would be guessed
		"team/claim-exporter",            // the same
		"ghcr.io/team/claim-exporter:v1", // a tag: the digest decides
		"ghcr.io/team/claim-exporter@sha256:" + strings.Repeat("a", 64),
		"ghcr.io/Team/claim-exporter", // upper case
		"",
	} {
		if _, err := ParseRepository(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
