package components

import (
	"fmt"
	"reflect"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes"
	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apiextensions"
	corev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/core/v1"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

const (
	// PoolReplicasPath is the field the HPA owns once the ScaledObject exists.
	PoolReplicasPath = "spec.replicas"

	// PodSecurityLevel is the Pod Security Standard the stack's namespace enforces. Both kinds
	// of pod in it meet it: the exporter, and the sandbox pods, whose template runs them as a
	// non-root user with no capabilities, no privilege escalation and the runtime's seccomp profile.
	PodSecurityLevel = "restricted"
	// PodSecurityVersion pins the standard's rules to the oldest Kubernetes the stack supports,
	// so a cluster upgrade cannot start rejecting the pool's pods.
	PodSecurityVersion = "v1.36"
	// SandboxUID runs the sandbox's processes; any non-root UID meets the restricted level.
	SandboxUID = 65532
)

// PodSecurityLabels are the Pod Security admission labels of the stack's namespace: the API
// server rejects (enforce), records (audit) and warns about (warn) any pod below the level.
func PodSecurityLabels() map[string]string {
	l := map[string]string{}
	for _, mode := range []string{"enforce", "audit", "warn"} {
		l["pod-security.kubernetes.io/"+mode] = PodSecurityLevel
		l["pod-security.kubernetes.io/"+mode+"-version"] = PodSecurityVersion
	}
	return l
}

// WarmPoolType is the WarmPool component's type token.
const WarmPoolType = "warmpool:index:WarmPool"

// WarmPoolArgs names the namespace, template and pool, and the floor the pool starts at.
type WarmPoolArgs struct {
	Namespace        string
	StackLabelValue  string
	TemplateName     string
	PoolName         string
	InitialReplicas  int
	RuntimeClassName string
	// Agent is the sandbox's container; the zero value is the blueprint's placeholder (DefaultAgent).
	Agent Agent
	// Nodes puts the sandboxes on the stack's own NodePool (SandboxNodes.Placement); nil: wherever
	// the cluster schedules them, the pod spec as it always was.
	Nodes *SandboxPlacement
	// DependsOn: the RuntimeClass and the agent-sandbox CRDs the template and pool need.
	DependsOn []pulumi.Resource
	Scope     Scope
}

// WarmPool is the stack's namespace with its SandboxTemplate and SandboxWarmPool.
type WarmPool struct {
	pulumi.ResourceState

	Namespace     *corev1.Namespace
	NamespaceName pulumi.StringOutput
	Template      *apiextensions.CustomResource
	Pool          *apiextensions.CustomResource
	TemplateName  pulumi.StringOutput
	PoolName      pulumi.StringOutput
}

// NewWarmPool creates the namespace, the template and the pool. The pool's spec.replicas is the floor
// at creation only: later runs ignore it, because the HPA writes it through /scale and an update
// would either conflict with kube-controller-manager or reset the pool to its floor under load.
func NewWarmPool(ctx *pulumi.Context, name string, args *WarmPoolArgs, opts ...pulumi.ResourceOption) (*WarmPool, error) {
	if args.Agent.Image == "" && !reflect.DeepEqual(args.Agent, Agent{}) {
		// The zero Agent means the placeholder; an Agent with settings but no image would
		// otherwise be replaced by it, every setting dropped without a word.
		return nil, fmt.Errorf("warm pool %s: Agent has settings but no Image; set Image, or leave the whole Agent zero for the placeholder %s", name, contract.WarmPodImage)
	}
	w := &WarmPool{}
	if err := ctx.RegisterComponentResource(WarmPoolType, args.Scope.Name(name), w, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	ns, err := newOwnedNamespace(ctx, args.Scope, args.Namespace, args.StackLabelValue, pulumi.Parent(w), pulumi.DependsOn(args.DependsOn))
	if err != nil {
		return nil, err
	}
	w.Namespace = ns
	w.NamespaceName = ns.Metadata.Name().Elem()
	inNamespace := []pulumi.Resource{ns}
	labels := pulumi.StringMap{contract.PartOfLabel: pulumi.String(contract.ManagedByValue)}
	agent := args.Agent
	if agent.Image == "" {
		agent = DefaultAgent()
	}

	podSpec := agent.podSpec(args.RuntimeClassName)
	if args.Nodes != nil {
		for k, v := range args.Nodes.podSpecFields() {
			podSpec[k] = v
		}
	}
	template, err := apiextensions.NewCustomResource(ctx, args.Scope.Name(args.TemplateName), &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(contract.AgentSandboxExtensionsAPIVersion),
		Kind:       pulumi.String(contract.SandboxTemplateKind),
		Metadata:   &metav1.ObjectMetaArgs{Name: pulumi.String(args.TemplateName), Namespace: w.NamespaceName, Labels: labels},
		OtherFields: kubernetes.UntypedArgs{
			"spec": pulumi.Map{
				"podTemplate": pulumi.Map{
					"metadata": pulumi.Map{"annotations": pulumi.ToStringMap(SandboxPodAnnotations())},
					"spec":     podSpec,
				},
			},
		},
	}, args.Scope.Opts(args.TemplateName, pulumi.Parent(w), pulumi.DependsOn(append(inNamespace, args.DependsOn...)))...)
	if err != nil {
		return nil, err
	}
	w.Template = template

	pool, err := apiextensions.NewCustomResource(ctx, args.Scope.Name(args.PoolName), &apiextensions.CustomResourceArgs{
		ApiVersion: pulumi.String(contract.AgentSandboxExtensionsAPIVersion),
		Kind:       pulumi.String(contract.SandboxWarmPoolKind),
		Metadata:   &metav1.ObjectMetaArgs{Name: pulumi.String(args.PoolName), Namespace: w.NamespaceName, Labels: labels},
		OtherFields: kubernetes.UntypedArgs{
			"spec": pulumi.Map{
				"replicas":           pulumi.Int(args.InitialReplicas),
				"sandboxTemplateRef": pulumi.Map{"name": pulumi.String(args.TemplateName)},
			},
		},
	}, args.Scope.Opts(args.PoolName, pulumi.Parent(w),
		// The pool goes before its template on destroy: a pool without a template cannot boot replacements.
		pulumi.DependsOn(append([]pulumi.Resource{ns, template}, args.DependsOn...)),
		pulumi.IgnoreChanges([]string{PoolReplicasPath}))...)
	if err != nil {
		return nil, err
	}
	w.Pool = pool
	w.TemplateName = pulumi.String(args.TemplateName).ToStringOutput()
	w.PoolName = pulumi.String(args.PoolName).ToStringOutput()

	return w, ctx.RegisterResourceOutputs(w, pulumi.Map{
		"namespace":    w.NamespaceName,
		"templateName": w.TemplateName,
		"poolName":     w.PoolName,
	})
}
