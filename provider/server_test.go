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
	})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `"third"`), err.Error())
}

func TestOnlyTheComponentIsConstructed(t *testing.T) {
	_, err := (&server{}).Construct(context.Background(), &pulumirpc.ConstructRequest{Type: "warmpool:index:WarmPool", Name: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serves warmpool:index:AutoscaledWarmPool only, not warmpool:index:WarmPool")
}
