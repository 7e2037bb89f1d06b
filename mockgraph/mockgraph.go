// Package mockgraph is a Pulumi mock monitor that records the resource graph a program registers
// (type, name, inputs, provider, parent, dependencies, ignoreChanges, reads), so unit tests can assert
// the graph itself rather than only that the program ran.
package mockgraph

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// Resource is one registration (or read) as the engine would see it.
type Resource struct {
	Type, Name string
	URN        string
	Inputs     resource.PropertyMap
	// Provider is the provider reference ("<urn>::<id>") for custom resources and reads.
	Provider string
	// Providers is the provider map sent with (remote) component resources.
	Providers     map[string]string
	Parent        string
	Dependencies  []string
	IgnoreChanges []string
	Custom        bool
	Remote        bool
	Read          bool
	ID            string
	// Transforms is how many resource transforms the registration carries (the engine applies
	// them to the resource and its children, a remote component's included).
	Transforms int
	// Aliases are the URNs the registration's aliases name, collapsed as the engine collapses
	// them (an alias without a parent is under the resource's own parent); the engine's
	// aliases through a parent's alias are left out.
	Aliases []string
}

// Recorder implements pulumi.MockResourceMonitor.
type Recorder struct {
	// Absent lists "<type>/<id>" of objects a read must not find, e.g.
	// "kubernetes:node.k8s.io/v1:RuntimeClass/isolated-sandbox".
	Absent map[string]bool
	// Zones answers aws:getAvailabilityZones, in this order, whatever the invoke asks (the test
	// reads what it asked from Invokes).
	Zones []Zone
	// API answers the endpoint of the cluster a mocked eks:index:Cluster makes (its kubeconfigJson
	// points at it): /healthz, and reads of RuntimeClasses, absent when Absent lists them.
	API ClusterAPI
	// ServedVersions answers a read of a CustomResourceDefinition (by name) with these
	// versions served; New fills in what current agent-sandbox and KEDA releases serve.
	ServedVersions map[string][]string
	// Preview runs the program as `pulumi preview` does (ctx.DryRun()).
	Preview bool

	// RuntimeClassOverhead answers a read of a RuntimeClass with this overhead.podFixed (cpu,
	// memory); nil: the RuntimeClass declares no overhead.
	RuntimeClassOverhead map[string]string

	mu        sync.Mutex
	resources []Resource
	invokes   []Invoke
	api       *apiServer
	reg       *registryServer
	// ctx is the program's context (Program), for what the recorder registers in a packaged
	// component's place; standIns are those registrations, left out of the record.
	ctx      *pulumi.Context
	standIns map[string]bool
}

// Zone is an availability zone as EC2 lists it: its name (per account) and its ID.
type Zone struct{ Name, ID string }

// Invoke is one function call (invoke) the program made.
type Invoke struct {
	Token string
	Args  resource.PropertyMap
}

// New returns a recorder for project/stack.
func New() *Recorder {
	return &Recorder{Absent: map[string]bool{}, Zones: []Zone{{Name: "us-west-2a", ID: "usw2-az2"}, {Name: "us-west-2b", ID: "usw2-az1"}, {Name: "us-west-2c", ID: "usw2-az3"}},
		ServedVersions: map[string][]string{
			"sandboxes.agents.x-k8s.io":                   {"v1beta1", "v1alpha1"},
			"sandboxtemplates.extensions.agents.x-k8s.io": {"v1beta1", "v1alpha1"},
			"sandboxwarmpools.extensions.agents.x-k8s.io": {"v1beta1", "v1alpha1"},
			"sandboxclaims.extensions.agents.x-k8s.io":    {"v1beta1", "v1alpha1"},
			"scaledobjects.keda.sh":                       {"v1alpha1"},
		}}
}

// Options is what pulumi.RunErr needs.
func (r *Recorder) Options(project, stack string) pulumi.RunOption {
	mocks := pulumi.WithMocks(project, stack, r)
	return func(info *pulumi.RunInfo) {
		mocks(info)
		info.DryRun = info.DryRun || r.Preview
	}
}

// WithConfig gives the program its stack config (keys "<project>:<key>") as the engine does,
// without setting PULUMI_CONFIG for the whole process.
func WithConfig(config map[string]string) pulumi.RunOption {
	return func(info *pulumi.RunInfo) { info.Config = config }
}

// MockElasticIP is the address every mocked Elastic IP gets.
const MockElasticIP = "198.51.100.77"

// What a mocked eks:index:Cluster answers for the Auto Mode parts pulumi-eks makes inside its
// component: the node role's name (autoModeNodeRoleName), EKS's cluster security group
// (clusterSecurityGroupId), and the cluster IAM role (core.clusterIamRole, a resource reference,
// whose name is ClusterRoleName; with Program only).
const (
	NodeRoleName           = "cluster-nodeRole-5e6f7a8"
	ClusterRoleName        = "cluster-eksRole-role-1a2b3c4"
	ClusterSecurityGroupID = "sg-0c1a2b3c4d5e6f708"
)

// Program runs program with the recorder standing in for what a packaged component registers
// inside itself and hands back as a resource reference: the mock monitor creates no children, and
// the SDK reads a referenced resource back from the monitor (pulumi:pulumi:getResource), so the
// reference must name one it knows. The stand-ins are registered through the program's context
// and left out of All and Find: they are pulumi-eks's, not the program's.
func (r *Recorder) Program(program pulumi.RunFunc) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		r.mu.Lock()
		r.ctx = ctx
		r.mu.Unlock()
		return program(ctx)
	}
}

// standInClusterRole registers the cluster IAM role pulumi-eks makes for cluster (its
// "<name>-eksRole" ServiceRole's role) and returns a reference to it once the monitor knows it;
// without Program, no reference.
func (r *Recorder) standInClusterRole(cluster string) (resource.PropertyValue, bool, error) {
	r.mu.Lock()
	ctx := r.ctx
	name := cluster + "-eksRole-role"
	if r.standIns == nil {
		r.standIns = map[string]bool{}
	}
	r.standIns["aws:iam/role:Role::"+name] = true
	r.mu.Unlock()
	if ctx == nil {
		return resource.PropertyValue{}, false, nil
	}
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(ClusterRoleName),
		AssumeRolePolicy: pulumi.String(`{"Version":"2012-10-17","Statement":[]}`),
	})
	if err != nil {
		return resource.PropertyValue{}, false, err
	}
	// The URN resolves once the monitor has stored the role, so a read of it finds it.
	registered := make(chan string, 1)
	role.URN().ApplyT(func(u pulumi.URN) string { registered <- string(u); return "" })
	select {
	case u := <-registered:
		return resource.MakeCustomResourceReference(resource.URN(u), resource.ID(ClusterRoleName), ""), true, nil
	case <-time.After(time.Minute):
		return resource.PropertyValue{}, false, fmt.Errorf("mockgraph: the stand-in for %s was not registered within a minute", name)
	}
}

// NewResource records the registration and echoes the inputs as outputs.

func (r *Recorder) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	rec := Resource{Type: args.TypeToken, Name: args.Name, Inputs: args.Inputs, Provider: args.Provider, Custom: args.Custom}
	if rpc := args.RegisterRPC; rpc != nil {
		rec.Parent, rec.Dependencies, rec.IgnoreChanges, rec.Remote = rpc.GetParent(), rpc.GetDependencies(), rpc.GetIgnoreChanges(), rpc.GetRemote()
		rec.Providers = rpc.GetProviders()
		rec.Transforms = len(rpc.GetTransforms())
		for _, a := range rpc.GetAliases() {
			rec.Aliases = append(rec.Aliases, aliasURN(a, rec.Parent, rec.Type, rec.Name))
		}
	}
	if rpc := args.ReadRPC; rpc != nil {
		rec.Read, rec.ID, rec.Parent, rec.Dependencies = true, rpc.GetId(), rpc.GetParent(), rpc.GetDependencies()
		if r.Absent[args.TypeToken+"/"+rpc.GetId()] {
			return "", nil, fmt.Errorf("resource '%s' does not exist", rpc.GetId())
		}
	}
	rec.URN = urn(rec.Parent, rec.Type, rec.Name)
	r.mu.Lock()
	if !r.standIns[rec.Type+"::"+rec.Name] {
		r.resources = append(r.resources, rec)
	}
	r.mu.Unlock()

	outputs := args.Inputs.Copy()
	if rec.Read && args.TypeToken == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition" {
		var versions []resource.PropertyValue
		for _, v := range r.ServedVersions[rec.ID] {
			versions = append(versions, resource.NewProperty(resource.PropertyMap{
				"name": resource.NewProperty(v), "served": resource.NewProperty(true), "storage": resource.NewProperty(len(versions) == 0),
			}))
		}
		// A version the CRD still lists but no longer serves, as an upgraded install keeps it.
		versions = append(versions, resource.NewProperty(resource.PropertyMap{
			"name": resource.NewProperty("v0old"), "served": resource.NewProperty(false), "storage": resource.NewProperty(false),
		}))
		outputs["spec"] = resource.NewProperty(resource.PropertyMap{"versions": resource.NewProperty(versions)})
	}
	if args.TypeToken == "aws:ec2/eip:Eip" {
		// AWS allocates the address; a documentation address stands in for it (RFC 5737).
		outputs["publicIp"] = resource.NewProperty(MockElasticIP)
	}
	if args.TypeToken == "aws:ecr/repository:Repository" {
		r.ecrRepositoryOutputs(outputs)
	}
	if args.TypeToken == "eks:index:Cluster" {
		kubeconfig, err := r.clusterAPI().kubeconfig()
		if err != nil {
			return "", nil, err
		}
		outputs["kubeconfigJson"] = resource.NewProperty(kubeconfig)
		outputs["autoModeNodeRoleName"] = resource.NewProperty(NodeRoleName)
		outputs["clusterSecurityGroupId"] = resource.NewProperty(ClusterSecurityGroupID)
		role, ok, err := r.standInClusterRole(args.Name)
		if err != nil {
			return "", nil, err
		}
		if ok {
			outputs["core"] = resource.NewProperty(resource.PropertyMap{"clusterIamRole": role})
		}
	}
	if rec.Read && args.TypeToken == "kubernetes:node.k8s.io/v1:RuntimeClass" && r.RuntimeClassOverhead != nil {
		podFixed := resource.PropertyMap{}
		for k, v := range r.RuntimeClassOverhead {
			podFixed[resource.PropertyKey(k)] = resource.NewProperty(v)
		}
		outputs["overhead"] = resource.NewProperty(resource.PropertyMap{"podFixed": resource.NewProperty(podFixed)})
	}
	id := args.ID
	if id == "" {
		id = args.Name + "-id"
	}
	return id, outputs, nil
}

// Call answers the invokes the program makes.
func (r *Recorder) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	r.mu.Lock()
	r.invokes = append(r.invokes, Invoke{Token: args.Token, Args: args.Args})
	r.mu.Unlock()
	if args.Token == "aws:index/getAvailabilityZones:getAvailabilityZones" {
		names := make([]resource.PropertyValue, 0, len(r.Zones))
		ids := make([]resource.PropertyValue, 0, len(r.Zones))
		for _, z := range r.Zones {
			names = append(names, resource.NewProperty(z.Name))
			ids = append(ids, resource.NewProperty(z.ID))
		}
		return resource.PropertyMap{"names": resource.NewProperty(names), "zoneIds": resource.NewProperty(ids)}, nil
	}
	if args.Token == "aws:ecr/getAuthorizationToken:getAuthorizationToken" {
		return r.ecrAuthorizationToken(), nil
	}
	return resource.PropertyMap{}, nil
}

// Invokes returns the invokes of a token (all when empty), in call order.
func (r *Recorder) Invokes(token string) []Invoke {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Invoke
	for _, i := range r.invokes {
		if token == "" || i.Token == token {
			out = append(out, i)
		}
	}
	return out
}

// All returns every recorded resource, in registration order.
func (r *Recorder) All() []Resource {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Resource(nil), r.resources...)
}

// Find returns the resources of a type (all types when typ is empty) whose name is name (any when empty).
func (r *Recorder) Find(typ, name string) []Resource {
	var out []Resource
	for _, res := range r.All() {
		if (typ == "" || res.Type == typ) && (name == "" || res.Name == name) {
			out = append(out, res)
		}
	}
	return out
}

// One returns the single resource of type and name, or an error saying how many there were.
func (r *Recorder) One(typ, name string) (Resource, error) {
	found := r.Find(typ, name)
	if len(found) != 1 {
		return Resource{}, fmt.Errorf("want exactly one %s %q, found %d", typ, name, len(found))
	}
	return found[0], nil
}

// DependsOn reports whether res lists other among its dependencies.
func (res Resource) DependsOn(other Resource) bool {
	for _, d := range res.Dependencies {
		if d == other.URN {
			return true
		}
	}
	return false
}

// ProviderURN is the URN part of the provider reference the resource is managed by: its own for
// custom resources and reads, the "kubernetes" entry of its provider map for remote components.
func (res Resource) ProviderURN(pkg string) string {
	ref := res.Provider
	if ref == "" {
		ref = res.Providers[pkg]
	}
	if i := strings.LastIndex(ref, "::"); i > 0 {
		return ref[:i]
	}
	return ref
}

// Path reads a nested input, e.g. Path("spec", "scaleTargetRef", "kind").
func (res Resource) Path(keys ...string) (resource.PropertyValue, bool) {
	v := resource.NewProperty(res.Inputs)
	for _, k := range keys {
		if v.IsSecret() {
			v = v.SecretValue().Element
		}
		if !v.IsObject() {
			return resource.PropertyValue{}, false
		}
		next, ok := v.ObjectValue()[resource.PropertyKey(k)]
		if !ok {
			return resource.PropertyValue{}, false
		}
		v = next
	}
	return v, true
}

// aliasURN is the URN an alias names (pulumi/pulumi pkg/resource/deploy, collapseAliasToUrn).
func aliasURN(a *pulumirpc.Alias, parent, typ, name string) string {
	if u := a.GetUrn(); u != "" {
		return u
	}
	spec := a.GetSpec()
	if spec.GetName() != "" {
		name = spec.GetName()
	}
	if spec.GetType() != "" {
		typ = spec.GetType()
	}
	if p := spec.GetParentUrn(); p != "" {
		parent = p
	}
	if spec.GetNoParent() {
		p := resource.URN(parent)
		return string(resource.NewURN(p.Stack(), p.Project(), "", tokens.Type(typ), name))
	}
	return urn(parent, typ, name)
}

// urn mirrors the mock monitor's URN scheme, so dependency URNs can be matched with recorded resources.
func urn(parent, typ, name string) string {
	p := resource.URN(parent)
	if !p.IsValid() {
		return ""
	}
	parentType := tokens.Type("")
	if p.QualifiedType() != resource.RootStackType {
		parentType = p.QualifiedType()
	}
	return string(resource.NewURN(p.Stack(), p.Project(), parentType, tokens.Type(typ), name))
}
