package awscomponents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/components"
)

type network struct {
	vpcID            pulumi.StringOutput
	privateSubnetIDs pulumi.StringArrayOutput
	// egress is everything the private subnets' way out needs (gateways, routes, public subnets):
	// the cluster depends on it, so it exists before the nodes and is deleted after them.
	egress []pulumi.Resource
	// natPublicIPs are the NAT gateways' Elastic IPs: the nodes' address on the internet.
	natPublicIPs pulumi.StringArrayOutput
}

// EKSUnsupportedZoneIDs are the Availability Zones EKS refuses cluster subnets in
// (UnsupportedAvailabilityZoneException), by zone ID: a zone's name maps to a different zone in
// each account, its ID does not. The list is the table "The subnets can't reside in the following
// Availability Zones" under "Subnet requirements for clusters" in the EKS user guide,
// https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html#cluster-subnets
// (awsdocs/amazon-eks-user-guide, latest/ug/networking/network-reqs.adoc).
var EKSUnsupportedZoneIDs = []string{"use1-az3", "usw1-az2", "cac1-az3"}

// eksZones picks the first n zones (in the order listed: by name) whose ID EKS supports, from the
// parallel name and ID lists aws:getAvailabilityZones returns. Zones that were chosen before this
// rule existed stay the same wherever they were supported ones.
func eksZones(names, ids []string, n int) ([]string, error) {
	var chosen, skipped []string
	for i, name := range names {
		if i >= len(ids) {
			break
		}
		if slices.Contains(EKSUnsupportedZoneIDs, ids[i]) {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, ids[i]))
			continue
		}
		if len(chosen) < n {
			chosen = append(chosen, name)
		}
	}
	if len(chosen) < n {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf(" (EKS does not support %s)", strings.Join(skipped, ", "))
		}
		return nil, fmt.Errorf("the region has %d available zone(s) EKS supports%s; EKS needs %d: pick another aws:region or set vpcId and privateSubnetIds",
			len(chosen), why, n)
	}
	return chosen, nil
}

// newNetwork builds a two-AZ VPC: public subnets (tagged for internet-facing load balancers)
// with an internet gateway, private subnets (tagged for internal ones, where Auto Mode puts
// nodes) behind one NAT gateway, or one per zone (natPerZone). One NAT costs half as much, but
// it is a single-zone egress point: when its zone fails, the other zone's nodes lose their way
// out (to ECR, to the EKS API's public endpoint, to AWS's APIs) too.
func newNetwork(ctx *pulumi.Context, name, clusterName string, tags map[string]string, natPerZone bool, parent pulumi.Resource) (*network, error) {
	zones, err := aws.GetAvailabilityZones(ctx, &aws.GetAvailabilityZonesArgs{
		State: pulumi.StringRef("available"),
		// Availability Zones only: opted-in Local Zones and Wavelength Zones are listed otherwise,
		// and EKS takes neither for cluster subnets (the same page).
		Filters:        []aws.GetAvailabilityZonesFilter{{Name: "zone-type", Values: []string{"availability-zone"}}},
		ExcludeZoneIds: EKSUnsupportedZoneIDs,
	}, pulumi.Parent(parent))
	if err != nil {
		return nil, fmt.Errorf("listing availability zones: %w", err)
	}
	// The provider already leaves out the excluded IDs; eksZones checks by ID again, so the choice
	// never rests on zone names.
	chosen, err := eksZones(zones.Names, zones.ZoneIds, components.NetworkZones)
	if err != nil {
		return nil, err
	}
	var egress []pulumi.Resource
	b := networkBuilder{ctx: ctx, name: name, clusterName: clusterName, stackTags: tags, zones: chosen, child: pulumi.Parent(parent), egress: &egress}

	vpc, err := ec2.NewVpc(ctx, name+"-vpc", &ec2.VpcArgs{
		CidrBlock:          pulumi.String("10.0.0.0/16"),
		EnableDnsHostnames: pulumi.Bool(true),
		EnableDnsSupport:   pulumi.Bool(true),
		Tags:               b.tags(clusterName, nil),
	}, b.child)
	if err != nil {
		return nil, err
	}
	igw, err := ec2.NewInternetGateway(ctx, name+"-igw", &ec2.InternetGatewayArgs{
		VpcId: vpc.ID(), Tags: b.tags(clusterName, nil),
	}, b.child)
	if err != nil {
		return nil, err
	}
	b.out(igw)
	publics, err := b.publicSubnets(vpc, igw)
	if err != nil {
		return nil, err
	}
	// The first zone's NAT keeps the names it had before there could be more, so turning
	// natPerZone on adds the second zone's and moves that zone's subnet over, replacing nothing.
	nats := make([]*ec2.NatGateway, len(b.zones))
	var natIPs pulumi.StringArray
	for i := range b.zones {
		if i > 0 && !natPerZone {
			nats[i] = nats[0]
			continue
		}
		nat, natIP, err := b.natGateway(i, publics[i], igw)
		if err != nil {
			return nil, err
		}
		nats[i] = nat
		natIPs = append(natIPs, natIP)
	}
	privateIDs, err := b.privateSubnets(vpc, nats)
	if err != nil {
		return nil, err
	}
	return &network{
		vpcID:            vpc.ID().ToStringOutput(),
		privateSubnetIDs: privateIDs.ToStringArrayOutput(),
		egress:           egress,
		natPublicIPs:     natIPs.ToStringArrayOutput(),
	}, nil
}

// zoneSuffix names the parts of zone i beyond the first: the first keeps the plain name.
func zoneSuffix(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf("-%d", i)
}

// networkBuilder makes the network's parts, named and tagged alike.
type networkBuilder struct {
	ctx         *pulumi.Context
	name        string
	clusterName string
	stackTags   map[string]string // on every part, beside its Name and role tags
	zones       []string
	child       pulumi.ResourceOption
	egress      *[]pulumi.Resource
}

// out records a part of the private subnets' way out.
func (b networkBuilder) out(rs ...pulumi.Resource) { *b.egress = append(*b.egress, rs...) }

func (b networkBuilder) tags(n string, extra map[string]string) pulumi.StringMap {
	m := pulumi.StringMap{}
	for k, v := range b.stackTags {
		m[k] = pulumi.String(v)
	}
	m["Name"], m["kubernetes.io/cluster/"+b.clusterName] = pulumi.String(n), pulumi.String("shared")
	for k, v := range extra {
		m[k] = pulumi.String(v)
	}
	return m
}

// publicSubnets makes one public subnet per zone, routed to the internet gateway; the cluster is
// not given them (its subnets are where Auto Mode launches nodes).
func (b networkBuilder) publicSubnets(vpc *ec2.Vpc, igw *ec2.InternetGateway) ([]*ec2.Subnet, error) {
	routes, err := ec2.NewRouteTable(b.ctx, b.name+"-public", &ec2.RouteTableArgs{
		VpcId:  vpc.ID(),
		Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{CidrBlock: pulumi.String("0.0.0.0/0"), GatewayId: igw.ID()}},
		Tags:   b.tags(b.clusterName+"-public", nil),
	}, b.child)
	if err != nil {
		return nil, err
	}
	b.out(routes)
	var publics []*ec2.Subnet
	for i, az := range b.zones {
		public, err := ec2.NewSubnet(b.ctx, fmt.Sprintf("%s-public-%d", b.name, i), &ec2.SubnetArgs{
			VpcId:               vpc.ID(),
			AvailabilityZone:    pulumi.String(az),
			CidrBlock:           pulumi.Sprintf("10.0.%d.0/24", 200+i),
			MapPublicIpOnLaunch: pulumi.Bool(true),
			Tags:                b.tags(fmt.Sprintf("%s-public-%s", b.clusterName, az), map[string]string{"kubernetes.io/role/elb": "1"}),
		}, b.child)
		if err != nil {
			return nil, err
		}
		association, err := ec2.NewRouteTableAssociation(b.ctx, fmt.Sprintf("%s-public-%d", b.name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: public.ID(), RouteTableId: routes.ID(),
		}, b.child)
		if err != nil {
			return nil, err
		}
		b.out(public, association)
		publics = append(publics, public)
	}
	return publics, nil
}

// natGateway is a way out for the private subnets, in zone i's public subnet.
func (b networkBuilder) natGateway(i int, public *ec2.Subnet, igw *ec2.InternetGateway) (*ec2.NatGateway, pulumi.StringOutput, error) {
	name, tag := b.name+"-nat"+zoneSuffix(i), b.clusterName+"-nat"+zoneSuffix(i)
	eip, err := ec2.NewEip(b.ctx, name, &ec2.EipArgs{Domain: pulumi.String("vpc"), Tags: b.tags(tag, nil)}, b.child)
	if err != nil {
		return nil, pulumi.StringOutput{}, err
	}
	nat, err := ec2.NewNatGateway(b.ctx, name, &ec2.NatGatewayArgs{
		AllocationId: eip.ID(), SubnetId: public.ID(), Tags: b.tags(tag, nil),
	}, b.child, pulumi.DependsOn([]pulumi.Resource{igw}))
	if err != nil {
		return nil, pulumi.StringOutput{}, err
	}
	b.out(eip, nat)
	return nat, eip.PublicIp, nil
}

// privateSubnets makes one private subnet per zone, routed through nats[i], its zone's NAT
// gateway: one route table per NAT gateway.
func (b networkBuilder) privateSubnets(vpc *ec2.Vpc, nats []*ec2.NatGateway) (pulumi.StringArray, error) {
	tables := map[*ec2.NatGateway]*ec2.RouteTable{}
	var ids pulumi.StringArray
	for i, az := range b.zones {
		routes, made := tables[nats[i]]
		if !made {
			var err error
			routes, err = ec2.NewRouteTable(b.ctx, b.name+"-private"+zoneSuffix(i), &ec2.RouteTableArgs{
				VpcId:  vpc.ID(),
				Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{CidrBlock: pulumi.String("0.0.0.0/0"), NatGatewayId: nats[i].ID()}},
				Tags:   b.tags(b.clusterName+"-private"+zoneSuffix(i), nil),
			}, b.child)
			if err != nil {
				return nil, err
			}
			tables[nats[i]] = routes
			b.out(routes)
		}
		// /18 each: Auto Mode gives every pod a VPC address.
		private, err := ec2.NewSubnet(b.ctx, fmt.Sprintf("%s-private-%d", b.name, i), &ec2.SubnetArgs{
			VpcId:            vpc.ID(),
			AvailabilityZone: pulumi.String(az),
			CidrBlock:        pulumi.Sprintf("10.0.%d.0/18", 64*i),
			Tags:             b.tags(fmt.Sprintf("%s-private-%s", b.clusterName, az), map[string]string{"kubernetes.io/role/internal-elb": "1"}),
		}, b.child)
		if err != nil {
			return nil, err
		}
		association, err := ec2.NewRouteTableAssociation(b.ctx, fmt.Sprintf("%s-private-%d", b.name, i), &ec2.RouteTableAssociationArgs{
			SubnetId: private.ID(), RouteTableId: routes.ID(),
		}, b.child)
		if err != nil {
			return nil, err
		}
		b.out(association)
		ids = append(ids, private.ID().ToStringOutput())
	}
	return ids, nil
}
