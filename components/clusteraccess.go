package components

import (
	"fmt"
	"regexp"
	"strings"
)

// Who may reach a cluster the stack creates. The creator gets cluster admin from EKS itself
// (bootstrapClusterCreatorAdminPermissions); these are everyone else.
const (
	// ClusterAdminPolicy is EKS's access policy with every verb on every resource.
	ClusterAdminPolicy = "AmazonEKSClusterAdminPolicy"
	// PreviewGroup is the Kubernetes group the preview principal's access entry maps to; the
	// stack's PreviewAccess binds it to read-only RBAC. No EKS access policy fits (see the README).
	PreviewGroup = "warm-pool-autoscaling-keda:preview"
)

// principalArn is the grammar EKS access entries accept: an IAM role or user (not an STS session).
var principalArn = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):iam::(\d{12}):(role|user)/([\x21-\x7e]*/)?([A-Za-z0-9+=,.@_-]{1,64})$`)

var assumedRoleArn = regexp.MustCompile(`^arn:[a-z-]+:sts::(\d{12}):assumed-role/([^/]+)/`)

// CheckPrincipalArn returns "" when arn is an IAM role or user ARN, else what is wrong and the fix.
func CheckPrincipalArn(key, arn string) string {
	if principalArn.MatchString(arn) {
		return ""
	}
	if m := assumedRoleArn.FindStringSubmatch(arn); m != nil {
		return fmt.Sprintf("%s has %q, an STS session ARN (what `aws sts get-caller-identity` prints); access entries take the role itself: arn:aws:iam::%s:role/%s", key, arn, m[1], m[2])
	}
	return fmt.Sprintf("%s has %q, which is not an IAM role or user ARN; write it as arn:aws:iam::<12-digit account>:role/<name> or arn:aws:iam::<account>:user/<name>", key, arn)
}

// AccessEntryKey names an access entry (awscomponents/clusteraccess.go) after its principal, so
// reordering the config list replaces nothing.
func AccessEntryKey(prefix, arn string) string {
	m := principalArn.FindStringSubmatch(arn)
	if m == nil {
		return prefix
	}
	return prefix + "-" + m[2] + "-" + m[3] + "-" + strings.ToLower(m[5])
}
