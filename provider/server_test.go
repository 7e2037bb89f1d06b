package main

import (
	"context"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
}
