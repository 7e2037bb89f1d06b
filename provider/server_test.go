package main

import (
	"context"
	"strings"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestASecondComponentInAStackIsRefusedNamingTheFirst(t *testing.T) {
	s := &server{}
	require.NoError(t, s.oneForStack("team", "dev", "sandboxes"))
	require.NoError(t, s.oneForStack("team", "dev", "sandboxes"), "the same component again (preview, then update)")
	require.NoError(t, s.oneForStack("team", "prod", "other"), "another stack has its own")
	err := s.oneForStack("team", "dev", "more-sandboxes")
	require.Error(t, err)
	for _, want := range []string{`"more-sandboxes"`, `already has warmpool:index:AutoscaledWarmPool "sandboxes"`, "list every pool in its pools input"} {
		assert.Contains(t, err.Error(), want)
	}

	// Through Construct, before anything is read or registered.
	_, err = s.Construct(context.Background(), &pulumirpc.ConstructRequest{
		Project: "team", Stack: "dev", Name: "third", Type: "warmpool:index:AutoscaledWarmPool",
		Providers: map[string]string{"kubernetes": "urn:pulumi:dev::team::pulumi:providers:kubernetes::cluster::id"},
	})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `"third"`), err.Error())
}

func TestOnlyTheComponentIsConstructed(t *testing.T) {
	_, err := (&server{}).Construct(context.Background(), &pulumirpc.ConstructRequest{Type: "warmpool:index:WarmPool", Name: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serves warmpool:index:AutoscaledWarmPool only, not warmpool:index:WarmPool")
}

func TestWithoutTheCallersKubernetesProviderNothingIsConstructed(t *testing.T) {
	s := &server{}
	_, err := s.Construct(context.Background(), &pulumirpc.ConstructRequest{
		Project: "team", Stack: "dev", Name: "sandboxes", Type: "warmpool:index:AutoscaledWarmPool",
		Providers: map[string]string{"aws": "urn:pulumi:dev::team::pulumi:providers:aws::default::id"},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"sandboxes" has no kubernetes provider: pass your cluster's in its providers option`)
	assert.Empty(t, s.components, "refused before it counts as the stack's component")
}
