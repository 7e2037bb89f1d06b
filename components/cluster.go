package components

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-eks/sdk/v3/go/eks"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

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
	// Existing mode: kubeconfig contents, with current-context already chosen.
	Kubeconfig string
}

// Cluster exposes the one Kubernetes provider every in-cluster resource uses.
type Cluster struct {
	pulumi.ResourceState

	Name       pulumi.StringOutput
	Kubeconfig pulumi.StringOutput // secret
	Provider   *kubernetes.Provider
}

// NewCluster makes (create) or connects to (existing) the cluster.
func NewCluster(ctx *pulumi.Context, name string, args *ClusterArgs, opts ...pulumi.ResourceOption) (*Cluster, error) {
	c := &Cluster{}
	if err := ctx.RegisterComponentResource("warmpool:index:Cluster", name, c, opts...); err != nil {
		return nil, err
	}

	var kubeconfig pulumi.StringOutput
	switch args.Mode {
	case ModeCreate:
		eksCluster, err := newEksAutoModeCluster(ctx, name, args, c)
		if err != nil {
			return nil, err
		}
		// KubeconfigJson authenticates with `aws eks get-token`, so it carries no long-lived credential.
		kubeconfig = eksCluster.KubeconfigJson
		// The name is ours (set below), but it is only real once the cluster exists.
		c.Name = eksCluster.URN().ApplyT(func(pulumi.URN) string { return args.Name }).(pulumi.StringOutput)
	case ModeExisting:
		kubeconfig = pulumi.String(args.Kubeconfig).ToStringOutput()
		c.Name = pulumi.String(args.Name).ToStringOutput()
	default:
		return nil, fmt.Errorf("cluster mode %q is not %s or %s", args.Mode, ModeCreate, ModeExisting)
	}
	c.Kubeconfig = pulumi.ToSecret(kubeconfig).(pulumi.StringOutput)

	provider, err := kubernetes.NewProvider(ctx, name, &kubernetes.ProviderArgs{
		Kubeconfig: c.Kubeconfig,
	}, pulumi.Parent(c))
	if err != nil {
		return nil, err
	}
	c.Provider = provider

	return c, ctx.RegisterResourceOutputs(c, pulumi.Map{
		"name":       c.Name,
		"kubeconfig": c.Kubeconfig,
	})
}

func newEksAutoModeCluster(ctx *pulumi.Context, name string, args *ClusterArgs, parent pulumi.Resource) (*eks.Cluster, error) {
	vpcID := pulumi.String(args.VpcID).ToStringOutput()
	privateSubnets := pulumi.ToStringArray(args.PrivateSubnetIDs).ToStringArrayOutput()
	var egress []pulumi.Resource
	if args.VpcID == "" {
		// Many accounts have no default VPC, so create mode brings its own.
		network, err := newNetwork(ctx, name, args.Name, parent)
		if err != nil {
			return nil, err
		}
		vpcID, privateSubnets, egress = network.vpcID, network.privateSubnetIDs, network.egress
	}

	authMode := eks.AuthenticationModeApi
	corednsEnabled := false
	skipDefaultNodeGroup := true
	return eks.NewCluster(ctx, name, &eks.ClusterArgs{
		Name:    pulumi.StringPtr(args.Name),
		Version: pulumi.StringPtr(args.KubernetesVersion),
		// Access entries, not the deprecated aws-auth ConfigMap; the creator gets cluster admin.
		AuthenticationMode: &authMode,
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
		AccessEntries:    accessEntries(args.AdminPrincipalArns, args.PreviewPrincipalArn),
	}, pulumi.Parent(parent),
		// Up: nodes have a route out (NAT) before the cluster exists to launch them. Destroy: the
		// cluster, its nodes and their network interfaces are gone before the NAT gateway, routes,
		// subnets and VPC are deleted, so those deletes meet no DependencyViolation from our side.
		pulumi.DependsOn(egress))
}

type network struct {
	vpcID            pulumi.StringOutput
	privateSubnetIDs pulumi.StringArrayOutput
	// egress is everything a private subnet's way out needs (gateways, route tables, associations).
	egress []pulumi.Resource
}

const networkAZs = 2

// newNetwork builds a two-AZ VPC: public subnets (tagged for internet-facing load balancers)
// with an internet gateway, private subnets (tagged for internal ones, where Auto Mode puts
// nodes) behind one NAT gateway. One NAT keeps a demo cheap; it is a single-AZ egress point.
func newNetwork(ctx *pulumi.Context, name, clusterName string, parent pulumi.Resource) (*network, error) {
	zones, err := aws.GetAvailabilityZones(ctx, &aws.GetAvailabilityZonesArgs{State: pulumi.StringRef("available")}, pulumi.Parent(parent))
	if err != nil {
		return nil, fmt.Errorf("listing availability zones: %w", err)
	}
	if len(zones.Names) < networkAZs {
		return nil, fmt.Errorf("the region has %d available zone(s); EKS needs %d: pick another aws:region or set vpcId and privateSubnetIds", len(zones.Names), networkAZs)
	}
	tags := func(n string, extra map[string]string) pulumi.StringMap {
		m := pulumi.StringMap{"Name": pulumi.String(n), "kubernetes.io/cluster/" + clusterName: pulumi.String("shared")}
		for k, v := range extra {
			m[k] = pulumi.String(v)
		}
		return m
	}
	child := pulumi.Parent(parent)

	vpc, err := ec2.NewVpc(ctx, name+"-vpc", &ec2.VpcArgs{
		CidrBlock:          pulumi.String("10.0.0.0/16"),
		EnableDnsHostnames: pulumi.Bool(true),
		EnableDnsSupport:   pulumi.Bool(true),
		Tags:               tags(clusterName, nil),
	}, child)
	if err != nil {
		return nil, err
	}
	igw, err := ec2.NewInternetGateway(ctx, name+"-igw", &ec2.InternetGatewayArgs{
		VpcId: vpc.ID(), Tags: tags(clusterName, nil),
	}, child)
	if err != nil {
		return nil, err
	}
	publicRoutes, err := ec2.NewRouteTable(ctx, name+"-public", &ec2.RouteTableArgs{
		VpcId:  vpc.ID(),
		Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{CidrBlock: pulumi.String("0.0.0.0/0"), GatewayId: igw.ID()}},
		Tags:   tags(clusterName+"-public", nil),
	}, child)
	if err != nil {
		return nil, err
	}

	var privateIDs pulumi.StringArray
	egress := []pulumi.Resource{igw, publicRoutes}
	var firstPublic *ec2.Subnet
	for i := 0; i < networkAZs; i++ {
		az := zones.Names[i]
		public, err := ec2.NewSubnet(ctx, fmt.Sprintf("%s-public-%d", name, i), &ec2.SubnetArgs{
			VpcId:               vpc.ID(),
			AvailabilityZone:    pulumi.String(az),
			CidrBlock:           pulumi.Sprintf("10.0.%d.0/24", 200+i),
			MapPublicIpOnLaunch: pulumi.Bool(true),
			Tags:                tags(fmt.Sprintf("%s-public-%s", clusterName, az), map[string]string{"kubernetes.io/role/elb": "1"}),
		}, child)
		if err != nil {
			return nil, err
		}
		association, err := ec2.NewRouteTableAssociation(ctx, fmt.Sprintf("%s-public-%d", name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: public.ID(), RouteTableId: publicRoutes.ID(),
		}, child)
		if err != nil {
			return nil, err
		}
		if firstPublic == nil {
			firstPublic = public
		}
		egress = append(egress, public, association)
	}

	eip, err := ec2.NewEip(ctx, name+"-nat", &ec2.EipArgs{Domain: pulumi.String("vpc"), Tags: tags(clusterName+"-nat", nil)}, child)
	if err != nil {
		return nil, err
	}
	nat, err := ec2.NewNatGateway(ctx, name+"-nat", &ec2.NatGatewayArgs{
		AllocationId: eip.ID(), SubnetId: firstPublic.ID(), Tags: tags(clusterName+"-nat", nil),
	}, child, pulumi.DependsOn([]pulumi.Resource{igw}))
	if err != nil {
		return nil, err
	}
	privateRoutes, err := ec2.NewRouteTable(ctx, name+"-private", &ec2.RouteTableArgs{
		VpcId:  vpc.ID(),
		Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{CidrBlock: pulumi.String("0.0.0.0/0"), NatGatewayId: nat.ID()}},
		Tags:   tags(clusterName+"-private", nil),
	}, child)
	if err != nil {
		return nil, err
	}
	egress = append(egress, eip, nat, privateRoutes)
	for i := 0; i < networkAZs; i++ {
		az := zones.Names[i]
		// /18 each: Auto Mode gives every pod a VPC address.
		private, err := ec2.NewSubnet(ctx, fmt.Sprintf("%s-private-%d", name, i), &ec2.SubnetArgs{
			VpcId:            vpc.ID(),
			AvailabilityZone: pulumi.String(az),
			CidrBlock:        pulumi.Sprintf("10.0.%d.0/18", 64*i),
			Tags:             tags(fmt.Sprintf("%s-private-%s", clusterName, az), map[string]string{"kubernetes.io/role/internal-elb": "1"}),
		}, child)
		if err != nil {
			return nil, err
		}
		association, err := ec2.NewRouteTableAssociation(ctx, fmt.Sprintf("%s-private-%d", name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: private.ID(), RouteTableId: privateRoutes.ID(),
		}, child)
		if err != nil {
			return nil, err
		}
		egress = append(egress, association)
		privateIDs = append(privateIDs, private.ID().ToStringOutput())
	}

	return &network{
		vpcID:            vpc.ID().ToStringOutput(),
		privateSubnetIDs: privateIDs.ToStringArrayOutput(),
		egress:           egress,
	}, nil
}
