package awscomponents

import (
	"context"
	"fmt"
	"slices"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-eks/sdk/v3/go/eks"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

// NewCluster makes (create) or connects to (existing) the cluster.
func NewCluster(ctx *pulumi.Context, name string, args *components.ClusterArgs, opts ...pulumi.ResourceOption) (*components.Cluster, error) {
	c := &components.Cluster{}
	if err := ctx.RegisterComponentResource("warmpool:index:Cluster", name, c, opts...); err != nil {
		return nil, err
	}

	var kubeconfig pulumi.StringOutput
	switch args.Mode {
	case components.ModeCreate:
		eksCluster, privateSubnets, err := newEksAutoModeCluster(ctx, name, args, c)
		if err != nil {
			return nil, err
		}
		c.AutoMode = &components.AutoModeParts{
			NodeRoleName: eksCluster.AutoModeNodeRoleName,
			ClusterRoleName: eksCluster.Core.ApplyT(func(core eks.CoreData) (pulumi.StringOutput, error) {
				if core.ClusterIamRole == nil {
					return pulumi.StringOutput{}, fmt.Errorf("pulumi-eks returned no cluster IAM role for cluster %s (core.clusterIamRole)", args.Name)
				}
				return core.ClusterIamRole.Name, nil
			}).(pulumi.StringOutput),
			SecurityGroupID:  eksCluster.ClusterSecurityGroupId,
			PrivateSubnetIDs: privateSubnets,
		}
		// KubeconfigJson authenticates with `aws eks get-token`, so it carries no long-lived credential.
		// It is handed on (to the provider, so to every Kubernetes resource, and to the outputs) only
		// once the cluster's API endpoint answers: see components/clusterwait.go.
		kubeconfig = eksCluster.KubeconfigJson.ApplyTWithContext(ctx.Context(), func(goctx context.Context, kc string) (string, error) {
			if ctx.DryRun() {
				return kc, nil
			}
			if err := components.WaitForAPIEndpoint(goctx, kc, components.APIEndpointPatience, components.SayOn(ctx, c)); err != nil {
				return "", components.Explain(ctx, c, err)
			}
			return kc, nil
		}).(pulumi.StringOutput)
		// The name is ours (set below), but it is only real once the cluster exists.
		c.Name = eksCluster.URN().ApplyT(func(pulumi.URN) string { return args.Name }).(pulumi.StringOutput)
	case components.ModeExisting:
		kubeconfig = pulumi.String(args.Kubeconfig).ToStringOutput()
		c.Name = pulumi.String(args.Name).ToStringOutput()
	default:
		return nil, fmt.Errorf("cluster mode %q is not %s or %s", args.Mode, components.ModeCreate, components.ModeExisting)
	}
	c.Kubeconfig = pulumi.ToSecret(kubeconfig).(pulumi.StringOutput)

	provider, err := kubernetes.NewProvider(ctx, name, &kubernetes.ProviderArgs{
		Kubeconfig: c.Kubeconfig,
	}, pulumi.Parent(c))
	if err != nil {
		return nil, err
	}
	c.Provider = provider
	c.Created = args.Mode == components.ModeCreate

	return c, ctx.RegisterResourceOutputs(c, pulumi.Map{
		"name":       c.Name,
		"kubeconfig": c.Kubeconfig,
	})
}

func newEksAutoModeCluster(ctx *pulumi.Context, name string, args *components.ClusterArgs, parent pulumi.Resource) (*eks.Cluster, pulumi.StringArrayOutput, error) {
	vpcID := pulumi.String(args.VpcID).ToStringOutput()
	privateSubnets := pulumi.ToStringArray(args.PrivateSubnetIDs).ToStringArrayOutput()
	var egress []pulumi.Resource
	var natIPs pulumi.StringArrayOutput
	if args.VpcID == "" {
		// Many accounts have no default VPC, so create mode brings its own.
		network, err := newNetwork(ctx, name, args.Name, args.Tags, args.NatGatewayPerZone, parent)
		if err != nil {
			return nil, pulumi.StringArrayOutput{}, err
		}
		vpcID, privateSubnets, egress, natIPs = network.vpcID, network.privateSubnetIDs, network.egress, network.natPublicIPs
	}

	// EKS writes control-plane logs to /aws/eks/<name>/cluster and creates that group itself when
	// it is missing, with no retention, and deleting the cluster leaves it behind (EKS user guide,
	// "Send control plane logs to CloudWatch Logs"; the AWS provider's aws_eks_cluster docs create
	// it first for this reason). The stack's own group, made before the cluster and deleted after
	// it, carries the retention and the tags and goes with destroy.
	var logGroup []pulumi.Resource
	if len(args.LogTypes) > 0 {
		lg, err := cloudwatch.NewLogGroup(ctx, name+"-control-plane-logs", &cloudwatch.LogGroupArgs{
			Name:            pulumi.String(ControlPlaneLogGroup(args.Name)),
			RetentionInDays: pulumi.Int(args.LogRetentionDays),
			Tags:            pulumi.ToStringMap(args.Tags),
		}, pulumi.Parent(parent))
		if err != nil {
			return nil, pulumi.StringArrayOutput{}, err
		}
		logGroup = []pulumi.Resource{lg}
	}

	var secretsKey pulumi.StringPtrInput
	if args.SecretsKmsKeyArn != "" {
		secretsKey = pulumi.StringPtr(args.SecretsKmsKeyArn)
	}

	authMode := eks.AuthenticationModeApi
	corednsEnabled := false
	skipDefaultNodeGroup := true
	// Set explicitly, on or off: pulumi-eks v3.9.1 waits for the endpoint only when this argument
	// is set (cluster.ts line 799, pulumi/pulumi-eks#1135). That wait gives up silently after
	// 300 s, so the program's own wait (components/clusterwait.go) is the one that fails with a message.
	endpointPublicAccess := pulumi.BoolPtr(args.EndpointPublicAccess)
	var publicAccessCidrs pulumi.StringArrayInput
	if args.EndpointPublicAccess && len(args.PublicAccessCidrs) > 0 {
		publicAccessCidrs = pulumi.ToStringArray(args.PublicAccessCidrs)
		if !args.EndpointPrivateAccess && args.VpcID == "" {
			// Without the private endpoint the nodes reach the API server through the public one,
			// from the NAT gateway's address. EKS user guide, "Cluster API server endpoint": "you
			// will need to add the outbound IP address of the NAT gateway as part of an allowed CIDR
			// block on your public endpoint". The program's own NAT joins the list.
			// (With a VPC of the team's own, config refuses this combination: its NAT is unknown.)
			user := slices.Clone(args.PublicAccessCidrs)
			publicAccessCidrs = natIPs.ApplyT(func(ips []string) []string {
				out := slices.Clone(user)
				for _, ip := range ips {
					out = append(out, ip+"/32")
				}
				return out
			}).(pulumi.StringArrayOutput)
		}
	}
	cluster, err := eks.NewCluster(ctx, name, &eks.ClusterArgs{
		Name:    pulumi.StringPtr(args.Name),
		Version: pulumi.StringPtr(args.KubernetesVersion),
		// Access entries, not the deprecated aws-auth ConfigMap; the creator gets cluster admin.
		AuthenticationMode:    &authMode,
		EndpointPublicAccess:  endpointPublicAccess,
		EndpointPrivateAccess: pulumi.BoolPtr(args.EndpointPrivateAccess),
		PublicAccessCidrs:     publicAccessCidrs,
		// Control-plane logs to CloudWatch Logs (EKS writes /aws/eks/<name>/cluster).
		EnabledClusterLogTypes: pulumi.ToStringArray(args.LogTypes),
		EncryptionConfigKeyArn: secretsKey,
		// Every AWS resource pulumi-eks makes for the cluster (its roles, security group, the
		// cluster itself) carries the stack's tags.
		Tags: pulumi.ToStringMap(args.Tags),
		// Auto Mode runs the nodes (and the isolated-sandbox runtime), so no node group of ours.
		AutoMode:             &eks.AutoModeOptionsArgs{Enabled: true},
		SkipDefaultNodeGroup: &skipDefaultNodeGroup,
		// pulumi-eks v3 adds the coredns EKS add-on to Auto Mode clusters unless told not to
		// (pulumi/pulumi-eks#1726); Auto Mode runs cluster DNS itself, and the add-on fails there.
		CorednsAddonOptions: &eks.CoreDnsAddonOptionsArgs{Enabled: &corednsEnabled},
		VpcId:               vpcID,
		// Private subnets only: the cluster's subnets become the subnets of Auto Mode's built-in
		// NodeClass, so no node can land in a public subnet. Internet-facing load balancers still
		// find the public subnets by their kubernetes.io/role/elb tag.
		PrivateSubnetIds: privateSubnets,
		AccessEntries:    accessEntries(args.AdminPrincipalArns, args.PreviewPrincipalArn, args.Tags),
	}, pulumi.Parent(parent),
		// pulumi-eks v3.9.1 has no input for the upgrade policy (pulumi/pulumi-eks#1776), so the
		// policy is set on the aws:eks Cluster it creates, by a transform the engine applies to
		// the component's children.
		// Deletion protection the same way: Pulumi's protect on that resource, not on the component,
		// whose children the engine would otherwise be free to delete (EKS's own deletionProtection
		// needs the AWS provider v7, which pulumi-eks v3 does not take).
		pulumi.Transforms([]pulumi.ResourceTransform{EKSClusterTransform(args.UpgradePolicy, args.DeletionProtection)}),
		// Up: nodes have a route out (NAT) before the cluster exists to launch them. Destroy: the
		// cluster, its nodes and their network interfaces are gone before the NAT gateway, routes,
		// subnets and VPC are deleted, so those deletes meet no DependencyViolation from our side.
		pulumi.DependsOn(slices.Concat(egress, logGroup)))
	return cluster, privateSubnets, err
}

// ControlPlaneLogGroup is the CloudWatch Logs group EKS writes a cluster's control-plane logs to.
func ControlPlaneLogGroup(cluster string) string { return "/aws/eks/" + cluster + "/cluster" }
