package awscomponents

import (
	"context"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// eksClusterType is the resource pulumi-eks creates for the control plane.
const eksClusterType = "aws:eks/cluster:Cluster"

// EKSClusterTransform sets on the aws:eks Cluster that pulumi-eks creates what its own inputs
// cannot: the upgrade policy's supportType (pulumi/pulumi-eks#1776) and, when protect is set,
// Pulumi's protect, so destroy refuses to delete the control plane. Every other resource passes
// unchanged.
func EKSClusterTransform(supportType string, protect bool) pulumi.ResourceTransform {
	return func(_ context.Context, args *pulumi.ResourceTransformArgs) *pulumi.ResourceTransformResult {
		if args.Type != eksClusterType {
			return nil
		}
		props := pulumi.Map{}
		for k, v := range args.Props {
			props[k] = v
		}
		props["upgradePolicy"] = pulumi.Map{"supportType": pulumi.String(supportType)}
		opts := args.Opts
		opts.Protect = opts.Protect || protect
		return &pulumi.ResourceTransformResult{Props: props, Opts: opts}
	}
}
