package components

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrincipalArnGrammar(t *testing.T) {
	for _, ok := range []string{
		"arn:aws:iam::123456789012:role/Admin",
		"arn:aws:iam::123456789012:role/development/apps/my-role", // access entries accept role paths
		"arn:aws:iam::123456789012:user/alice",
		"arn:aws-cn:iam::123456789012:role/Admin",
		"arn:aws-us-gov:iam::123456789012:user/ops/bob+ci@example.com",
	} {
		assert.Empty(t, CheckPrincipalArn("k", ok), ok)
	}
	for arn, want := range map[string]string{
		"arn:aws:sts::123456789012:assumed-role/Admin/alice": "access entries take the role itself: arn:aws:iam::123456789012:role/Admin",
		"arn:aws:iam::123456789012:group/Admins":             "not an IAM role or user ARN",
		"arn:aws:iam::12345678901:role/Admin":                "not an IAM role or user ARN",
		"arn:aws:iam::123456789012:role/":                    "not an IAM role or user ARN",
		"arn:aws:iam:us-east-1:123456789012:role/Admin":      "not an IAM role or user ARN",
		"arn:aws:iam::123456789012:role/Admin ":              "not an IAM role or user ARN",
		"Admin":                                              "not an IAM role or user ARN",
	} {
		assert.Contains(t, CheckPrincipalArn("adminPrincipalArns", arn), want, arn)
	}
}
