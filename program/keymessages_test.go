package program

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message names the key as the stack set it, once, in the words of the JSON the user wrote.
func TestMessagesNameTheKeyTheStackSet(t *testing.T) {
	// A shorthand pool the exporter's parser refuses is named by the shorthand's keys, not as an
	// entry of a pools list the stack does not have.
	_, err := runProgram(t, withConfig(map[string]string{"poolName": strings.Repeat("a", 60), "sizing": `{"policy": "arrivals", "bootSeconds": 8}`}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the claim exporter would refuse the pool the program renders for it from poolName, namespace and claimSelector")
	assert.NotContains(t, err.Error(), "pools[")

	// A top-level scaleDown every listed pool inherits is wrong once, at scaleDown.
	_, err = runProgram(t, withConfig(map[string]string{"pools": `[{"name":"a"},{"name":"b"}]`, "scaleDown": `{"policy": "Bogus", "value": 2}`}))
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), `scaleDown.policy is "Bogus"`), err.Error())
	assert.NotContains(t, err.Error(), "pools[0].scaleDown")
	// A pool's own is named at the pool.
	_, err = runProgram(t, withConfig(map[string]string{"pools": `[{"name":"a"},{"name":"b", "scaleUp": {"policy": "Bogus", "value": 2}}]`}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pools[1].scaleUp.policy is "Bogus"`)
	assert.Equal(t, 1, strings.Count(err.Error(), `scaleUp.policy is "Bogus"`), err.Error())

	// No Go type in a message.
	for _, cfg := range []map[string]string{
		{"pools": `[{"name":"a", "namespace": ["x"]}]`},
		{"pools": `[{"name":"a", "namespace": {"x": 1}}]`},
	} {
		_, err := runProgram(t, withConfig(cfg))
		require.Error(t, err)
		assert.Regexp(t, `pools\[0\]\.namespace must be a string, not (a list|an object)`, err.Error())
		for _, goType := range []string{"interface {}", "map[", "[]"} {
			assert.NotContains(t, err.Error(), goType)
		}
	}
}
