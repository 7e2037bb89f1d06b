package components

import (
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// The cluster, as the components in it see it. awscomponents.NewCluster makes it (an EKS Auto
// Mode cluster, or the connection to an existing one): apart, so that what only runs in a cluster
// (the package's plugin) builds without the AWS and EKS SDKs.

// ClusterArgs selects between making an EKS Auto Mode cluster and using one the user names.
type ClusterArgs struct {
	Mode              string // ModeCreate or ModeExisting
	Name              string
	KubernetesVersion string
	// Create mode: an existing network. Empty VpcID makes a new one. Only private subnets: the
	// cluster's subnets are where Auto Mode's built-in NodeClass launches nodes.
	VpcID            string
	PrivateSubnetIDs []string
	// Create mode: IAM principals given access entries with the cluster (see clusteraccess.go).
	AdminPrincipalArns  []string
	PreviewPrincipalArn string
	// Create mode: the API endpoint (endpoint.go). Private access lets nodes and anything in the
	// VPC reach the API server without leaving it; the public endpoint is open to PublicAccessCidrs
	// only (empty: EKS's default, 0.0.0.0/0), or off.
	EndpointPrivateAccess bool
	EndpointPublicAccess  bool
	PublicAccessCidrs     []string
	// Create mode: the control-plane log types EKS sends to CloudWatch Logs (ClusterLogTypes), and
	// how many days the log group keeps them.
	LogTypes         []string
	LogRetentionDays int
	// Create mode: a customer-managed KMS key for the Kubernetes API's data (empty: EKS's default
	// envelope encryption with an AWS-owned key). pulumi-eks sets encryptionConfig (resources
	// "secrets") and grants nothing: the key's policy must let the principal running up call
	// kms:DescribeKey and kms:CreateGrant. EKS cannot take it off again.
	SecretsKmsKeyArn string
	// Create mode, the stack's own network: a NAT gateway in each zone, each zone's private subnet
	// routed through its own (false: one for both).
	NatGatewayPerZone bool
	// Create mode: the EKS cluster is protected (Pulumi's protect), so destroy refuses to delete it.
	DeletionProtection bool
	// Create mode: tags on every AWS resource the stack makes (the stack's own tag among them).
	Tags map[string]string
	// Create mode: EKS's upgrade policy, UpgradePolicyStandard or UpgradePolicyExtended.
	UpgradePolicy string
	// Existing mode: kubeconfig contents, with current-context already chosen.
	Kubeconfig string
}

// Cluster exposes the one Kubernetes provider every in-cluster resource uses.
type Cluster struct {
	pulumi.ResourceState

	Name       pulumi.StringOutput
	Kubeconfig pulumi.StringOutput // secret
	Provider   *kubernetes.Provider
	// Created says this program creates the cluster (create mode): what is read in it first
	// waits for it (SandboxRuntimeArgs.NewClusterKubeconfig).
	Created bool
	// AutoMode is what pulumi-eks made for Auto Mode that a NodeClass of the stack's own needs
	// (create mode; nil otherwise).
	AutoMode *AutoModeParts
}

// AutoModeParts are the Auto Mode cluster's parts a NodeClass and its tagging policy name.
type AutoModeParts struct {
	// NodeRoleName is the role pulumi-eks v3 makes for Auto Mode's nodes (its computeConfig's
	// nodeRoleArn, output autoModeNodeRoleName); EKS gives it an access entry with the cluster.
	NodeRoleName pulumi.StringOutput
	// ClusterRoleName is the cluster IAM role pulumi-eks makes ("<name>-eksRole"), which Auto Mode
	// launches nodes with; the Go SDK reaches it as core.clusterIamRole, a resource reference.
	ClusterRoleName pulumi.StringOutput
	// SecurityGroupID is EKS's cluster security group, which the built-in NodeClass gives its
	// nodes (pulumi-eks makes none of its own with Auto Mode: skipDefaultSecurityGroups).
	SecurityGroupID pulumi.StringOutput
	// PrivateSubnetIDs are the cluster's subnets, the built-in NodeClass's too.
	PrivateSubnetIDs pulumi.StringArrayOutput
}

// NetworkZones is how many zones the stack's own network spans (EKS needs subnets in two).
const NetworkZones = 2

// LogRetentionDays are the retention periods CloudWatch Logs accepts (PutRetentionPolicy).
var LogRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
