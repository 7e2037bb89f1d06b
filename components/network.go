package components

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

type network struct {
	vpcID            pulumi.StringOutput
	privateSubnetIDs pulumi.StringArrayOutput
	publicSubnetIDs  pulumi.StringArrayOutput
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

	var publicIDs, privateIDs pulumi.StringArray
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
		if _, err := ec2.NewRouteTableAssociation(ctx, fmt.Sprintf("%s-public-%d", name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: public.ID(), RouteTableId: publicRoutes.ID(),
		}, child); err != nil {
			return nil, err
		}
		if firstPublic == nil {
			firstPublic = public
		}
		publicIDs = append(publicIDs, public.ID().ToStringOutput())
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
		if _, err := ec2.NewRouteTableAssociation(ctx, fmt.Sprintf("%s-private-%d", name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: private.ID(), RouteTableId: privateRoutes.ID(),
		}, child); err != nil {
			return nil, err
		}
		privateIDs = append(privateIDs, private.ID().ToStringOutput())
	}

	return &network{
		vpcID:            vpc.ID().ToStringOutput(),
		privateSubnetIDs: privateIDs.ToStringArrayOutput(),
		publicSubnetIDs:  publicIDs.ToStringArrayOutput(),
	}, nil
}
