package awscomponents

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAccessEntryKeysFollowThePrincipalNotItsPosition(t *testing.T) {
	a := accessEntries([]string{"arn:aws:iam::123456789012:role/A", "arn:aws:iam::123456789012:role/B"}, "", nil)
	b := accessEntries([]string{"arn:aws:iam::123456789012:role/B", "arn:aws:iam::123456789012:role/A"}, "", nil)
	assert.Len(t, a, 2)
	for k := range a {
		_, same := b[k]
		assert.True(t, same, "reordering adminPrincipalArns must not rename entry %s", k)
	}
}
