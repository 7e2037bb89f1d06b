package localcluster

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/nodes"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// The names callers read nodes and pods by, kept here so that they need not
// know which part of the control plane defines them.
const (
	// SandboxNodeLabel marks the nodes the isolated RuntimeClass schedules to.
	SandboxNodeLabel = procspec.SandboxNodeLabel
	// RealNodeLabel marks real nodes (value "true").
	RealNodeLabel = procspec.RealNodeLabel
	// ClusterDomain is the kubelet's and CoreDNS's cluster domain.
	ClusterDomain = procspec.ClusterDomain
	// ClusterDNSAddress is where the cluster DNS answers (with real nodes).
	ClusterDNSAddress = procspec.ClusterDNSAddress
)

// InstanceType is one instance type Karpenter may launch (Options.Karpenter).
type InstanceType = procspec.InstanceType

// The real nodes' names, classes and images.
const (
	// LoopbackOnlyRuntimeClass runs pods with runc and only loopback on real
	// nodes: the "no isolation" stand-in of a reject run.
	LoopbackOnlyRuntimeClass = nodes.LoopbackOnlyRuntimeClass
	// SandboxImage stands in for the sandbox template's busybox on real nodes.
	SandboxImage = nodes.SandboxImage
	// TestBusyboxImage is the busybox the localcluster tests' pods use.
	TestBusyboxImage = nodes.TestBusyboxImage
	// ExporterGoImage stands in for the exporter's default-path image.
	ExporterGoImage = nodes.ExporterGoImage
)

// RealNodeName is the name of real node i.
func RealNodeName(i int) string { return nodes.RealNodeName(i) }

// WriteImageArchive writes an image naming ref as a docker-archive tarball,
// for ImportImage: files maps a path in the image to a host file or directory.
func WriteImageArchive(ref string, files map[string]string, cfg v1.Config, out string) error {
	return nodes.WriteImageArchive(ref, files, cfg, out)
}

// KarpenterOptions turn on Karpenter (Options.Karpenter).
type KarpenterOptions = addons.KarpenterOptions

// DefaultInstanceTypes are what Karpenter may launch unless told otherwise.
var DefaultInstanceTypes = addons.DefaultInstanceTypes

// The names of the objects Options.Karpenter applies.
const (
	KarpenterNodeClass = addons.KarpenterNodeClass
	KarpenterNodePool  = addons.KarpenterNodePool
)

// The resources callers read the control plane's add-ons by.
var (
	CRDGVR           = plane.CRDGVR
	APIServiceGVR    = plane.APIServiceGVR
	NodePoolGVR      = addons.NodePoolGVR
	NodeClaimGVR     = addons.NodeClaimGVR
	KWOKNodeClassGVR = addons.KWOKNodeClassGVR
)

// ConditionTrue reports whether u has status.conditions[type=typ] with status True.
func ConditionTrue(u *unstructured.Unstructured, typ string) bool { return plane.ConditionTrue(u, typ) }
