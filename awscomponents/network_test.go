package awscomponents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEKSZonesAreChosenByID(t *testing.T) {
	// us-east-1 in an account where us-east-1a is use1-az3, the zone EKS refuses.
	names := []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d"}
	ids := []string{"use1-az3", "use1-az1", "use1-az2", "use1-az4"}
	got, err := eksZones(names, ids, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"us-east-1b", "us-east-1c"}, got)

	got, err = eksZones([]string{"us-west-2a", "us-west-2b", "us-west-2c"}, []string{"usw2-az2", "usw2-az1", "usw2-az3"}, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"us-west-2a", "us-west-2b"}, got, "where every zone is supported, the first two as before")

	_, err = eksZones([]string{"us-west-1a", "us-west-1c"}, []string{"usw1-az2", "usw1-az1"}, 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the region has 1 available zone(s) EKS supports (EKS does not support us-west-1a (usw1-az2)); EKS needs 2")
}
