package components

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/apps/v1"
	corev1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/core/v1"
	metav1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/meta/v1"
	policyv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/policy/v1"
	rbacv1 "github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/rbac/v1"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

const (
	ExporterSourceConfigMap = contract.ExporterName + "-src"
	// ServiceAccountTokenDir is where client libraries, and the exporter's defaults, look for the token.
	ServiceAccountTokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	exporterSourceDir      = "/src"
	exporterScratchDir     = "/scratch"
	exporterUID            = 65532
	// exporterDrainSeconds: how long a stopping replica keeps serving before it is signalled.
	exporterDrainSeconds = 5
)

// ClaimExporterArgs places the exporter in the stack's namespace and says how its code gets there.
type ClaimExporterArgs struct {
	Namespace pulumi.StringInput
	// NamespaceName is Namespace as a plain name: a pool in it keeps the one-pool Role's name.
	NamespaceName string
	// DependsOn: at least the namespace, so destroy removes the exporter first.
	DependsOn []pulumi.Resource
	Selector  string
	// Image, when set, is the exporter's image (its entrypoint is the exporter): one the team
	// built (exporterImage) or the one the stack built and published (ExporterImage.Reference).
	Image pulumi.StringInput
	// ImagePlatform, when set, is the one platform Image was built for ("linux/amd64"): the pods
	// are kept to nodes of that OS and architecture.
	ImagePlatform string
	// Source (relative path -> content, from exporter.PodSource) is run with `go run` in contract.ExporterGoImage
	// when Image is empty: no registry, no Docker, the code reviewed is the code that runs.
	Source map[string]string
	// Replicas: exporter pods behind the Service (0: contract.DefaultExporterReplicas). From two
	// up a PodDisruptionBudget keeps one serving through any voluntary disruption.
	Replicas int
	// Pools, when set, are the pools the one exporter counts, each in a namespace of its own
	// (Selector is then ignored). Empty: the one pool in the exporter's namespace, as always.
	Pools []ExporterPool
	Scope Scope
}

// ExporterPool is one pool the exporter counts claims for: what the exporter reads of it
// (contract.ExporterPool) and what its Role must wait for.
type ExporterPool struct {
	contract.ExporterPool
	// DependsOn: the pool's namespace, so the Role is made in it and removed before it.
	DependsOn []pulumi.Resource
}

// PoolsEnv renders contract.ExporterPoolsEnv: the pools as the exporter reads them.
func PoolsEnv(pools []ExporterPool) string {
	var out []contract.ExporterPool
	for _, p := range pools {
		out = append(out, p.ExporterPool)
	}
	b, _ := json.Marshal(out) // strings and ints only: cannot fail
	return string(b)
}

// ClaimExporter is the exporter's ServiceAccount, Role, RoleBinding, Deployment and ClusterIP Service.
type ClaimExporter struct {
	pulumi.ResourceState

	ServiceAccountName pulumi.StringOutput
	ServiceName        pulumi.StringOutput
	// URL is the in-cluster /demand URL of the Service.
	URL pulumi.StringOutput
	// ServiceURL is the Service's in-cluster base URL (scheme, host and port).
	ServiceURL pulumi.StringOutput
	Deployment *appsv1.Deployment
	Service    *corev1.Service
	// Budget is the PodDisruptionBudget (nil with one replica: a budget of one would block
	// every drain).
	Budget *policyv1.PodDisruptionBudget
}

// ConfigMapKey flattens a source path into a ConfigMap key ("/" is not allowed in keys).
func ConfigMapKey(path string) string { return strings.ReplaceAll(path, "/", "__") }

// NewClaimExporter creates the exporter with the least it needs: get and list on sandboxclaims in its
// own namespace, a short-lived token mounted by hand, no privileges, reachable only inside the cluster.
func NewClaimExporter(ctx *pulumi.Context, name string, args *ClaimExporterArgs, opts ...pulumi.ResourceOption) (*ClaimExporter, error) {
	e := &ClaimExporter{}
	if err := ctx.RegisterComponentResource("warmpool:index:ClaimExporter", args.Scope.Name(name), e, args.Scope.Opts(name, opts...)...); err != nil {
		return nil, err
	}
	if args.Image == nil && len(args.Source) == 0 {
		return nil, fmt.Errorf("the claim exporter needs either an image (exporterImage) or its source (exporter.PodSource)")
	}
	o := exporterObjects{namespace: args.Namespace.ToStringOutput(), scope: args.Scope, child: []pulumi.ResourceOption{pulumi.Parent(e), pulumi.DependsOn(args.DependsOn)}}

	sa, bindings, err := newExporterAccess(ctx, o, args.NamespaceName, args.Pools)
	if err != nil {
		return nil, err
	}
	pod := prebuiltExporterPod(args)
	if args.Image == nil {
		if err := pod.runFromSource(ctx, o, args.Source); err != nil {
			return nil, err
		}
	}
	pod.dependsOn = append(append(pod.dependsOn, bindings...), args.DependsOn...)
	pod.replicas = args.Replicas
	if pod.replicas == 0 {
		pod.replicas = contract.DefaultExporterReplicas
	}
	deployment, err := newExporterDeployment(ctx, o, sa, pod, e)
	if err != nil {
		return nil, err
	}
	if pod.replicas >= 2 {
		if e.Budget, err = newExporterBudget(ctx, o); err != nil {
			return nil, err
		}
	}
	service, err := newExporterService(ctx, o)
	if err != nil {
		return nil, err
	}

	e.Deployment, e.Service = deployment, service
	e.ServiceAccountName = sa.Metadata.Name().Elem()
	e.ServiceName = service.Metadata.Name().Elem()
	e.ServiceURL = pulumi.Sprintf("http://%s.%s.svc.cluster.local:%d", e.ServiceName, args.Namespace, contract.ExporterPort)
	e.URL = pulumi.Sprintf("%s%s", e.ServiceURL, contract.DemandPath)
	return e, ctx.RegisterResourceOutputs(e, pulumi.Map{
		"serviceAccountName": e.ServiceAccountName,
		"serviceName":        e.ServiceName,
		"url":                e.URL,
	})
}

// exporterObjects places the exporter's objects: its namespace, labels and resource options.
type exporterObjects struct {
	namespace pulumi.StringOutput
	scope     Scope
	child     []pulumi.ResourceOption
}

var (
	exporterSelector = pulumi.StringMap{"app.kubernetes.io/name": pulumi.String(contract.ExporterName)}
	exporterLabels   = pulumi.StringMap{
		"app.kubernetes.io/name": pulumi.String(contract.ExporterName),
		contract.PartOfLabel:     pulumi.String(contract.ManagedByValue),
	}
)

func (o exporterObjects) meta(name string) *metav1.ObjectMetaArgs {
	return &metav1.ObjectMetaArgs{Name: pulumi.String(name), Namespace: o.namespace, Labels: exporterLabels}
}

// newExporterAccess makes the ServiceAccount and what it may do: get and list sandboxclaims in
// the namespace of each pool it counts (its own with one pool), nothing else, no ClusterRole.
func newExporterAccess(ctx *pulumi.Context, o exporterObjects, ownNamespace string, pools []ExporterPool) (*corev1.ServiceAccount, []pulumi.Resource, error) {
	sa, err := corev1.NewServiceAccount(ctx, o.scope.Name(contract.ExporterName), &corev1.ServiceAccountArgs{
		Metadata: o.meta(contract.ExporterName),
		// The pod mounts a projected token itself; nothing else should get one by default.
		AutomountServiceAccountToken: pulumi.Bool(false),
	}, o.scope.Opts(contract.ExporterName, o.child...)...)
	if err != nil {
		return nil, nil, err
	}
	if len(pools) == 0 {
		binding, err := newClaimReader(ctx, contract.ExporterName, o.namespace, sa, o, o.child...)
		return sa, []pulumi.Resource{binding}, err
	}
	var bindings []pulumi.Resource
	for _, p := range pools {
		opts := append(append([]pulumi.ResourceOption{}, o.child...), pulumi.DependsOn(p.DependsOn))
		// A pool in the exporter's own namespace (the one-pool shorthand) keeps the Role's
		// resource name, so choosing a sizing policy does not replace it.
		name := contract.ExporterName
		if p.Namespace != ownNamespace {
			name += "-" + p.Name
		}
		binding, err := newClaimReader(ctx, name, pulumi.String(p.Namespace).ToStringOutput(), sa, o, opts...)
		if err != nil {
			return nil, nil, err
		}
		bindings = append(bindings, binding)
	}
	return sa, bindings, nil
}

// newClaimReader is a Role in namespace that may get and list sandboxclaims, bound to the
// exporter's ServiceAccount (which lives in the exporter's namespace).
func newClaimReader(ctx *pulumi.Context, name string, namespace pulumi.StringOutput, sa *corev1.ServiceAccount, o exporterObjects, opts ...pulumi.ResourceOption) (*rbacv1.RoleBinding, error) {
	meta := &metav1.ObjectMetaArgs{Name: pulumi.String(contract.ExporterName), Namespace: namespace, Labels: exporterLabels}
	role, err := rbacv1.NewRole(ctx, o.scope.Name(name), &rbacv1.RoleArgs{
		Metadata: meta,
		// Counting claims is all it does: no watch, no writes, nothing outside these namespaces.
		Rules: rbacv1.PolicyRuleArray{rbacv1.PolicyRuleArgs{
			ApiGroups: pulumi.ToStringArray([]string{contract.AgentSandboxExtensionsGroup}),
			Resources: pulumi.ToStringArray([]string{contract.SandboxClaimsResource}),
			Verbs:     pulumi.ToStringArray([]string{"get", "list"}),
		}},
	}, o.scope.Opts(name, opts...)...)
	if err != nil {
		return nil, err
	}
	return rbacv1.NewRoleBinding(ctx, o.scope.Name(name), &rbacv1.RoleBindingArgs{
		Metadata: meta,
		RoleRef: rbacv1.RoleRefArgs{
			ApiGroup: pulumi.String("rbac.authorization.k8s.io"), Kind: pulumi.String("Role"), Name: role.Metadata.Name().Elem(),
		},
		Subjects: rbacv1.SubjectArray{rbacv1.SubjectArgs{
			Kind: pulumi.String("ServiceAccount"), Name: sa.Metadata.Name().Elem(), Namespace: o.namespace,
		}},
	}, o.scope.Opts(name, opts...)...)
}

// exporterPod is how the exporter's container runs: a prebuilt image's entrypoint, or its
// source with `go run` in a stock golang image.
type exporterPod struct {
	image        pulumi.StringInput
	nodeSelector pulumi.StringMap        // nil: any node
	command      pulumi.StringArrayInput // nil: a prebuilt image runs its own entrypoint
	workingDir   pulumi.StringPtrInput
	env          corev1.EnvVarArray
	volumes      corev1.VolumeArray
	mounts       corev1.VolumeMountArray
	annotations  pulumi.StringMap
	resources    corev1.ResourceRequirementsArgs
	dependsOn    []pulumi.Resource
	replicas     int
}

func prebuiltExporterPod(args *ClaimExporterArgs) *exporterPod {
	env := corev1.EnvVarArray{
		corev1.EnvVarArgs{Name: pulumi.String("EXPORTER_LISTEN"), Value: pulumi.Sprintf(":%d", contract.ExporterPort)},
	}
	if len(args.Pools) > 0 {
		env = append(env, corev1.EnvVarArgs{Name: pulumi.String(contract.ExporterPoolsEnv), Value: pulumi.String(PoolsEnv(args.Pools))})
	} else {
		env = append(env, corev1.EnvVarArgs{Name: pulumi.String("EXPORTER_SELECTOR"), Value: pulumi.String(args.Selector)})
	}
	var nodeSelector pulumi.StringMap
	if goos, goarch, ok := strings.Cut(args.ImagePlatform, "/"); ok {
		nodeSelector = pulumi.StringMap{"kubernetes.io/os": pulumi.String(goos), "kubernetes.io/arch": pulumi.String(goarch)}
	}
	return &exporterPod{
		image:        args.Image,
		nodeSelector: nodeSelector,
		env:          env,
		volumes:      corev1.VolumeArray{tokenVolume()},
		mounts: corev1.VolumeMountArray{
			corev1.VolumeMountArgs{Name: pulumi.String("token"), MountPath: pulumi.String(ServiceAccountTokenDir), ReadOnly: pulumi.Bool(true)},
		},
		annotations: pulumi.StringMap{},
		resources: corev1.ResourceRequirementsArgs{
			Requests: pulumi.StringMap{"cpu": pulumi.String("50m"), "memory": pulumi.String("64Mi")},
			Limits:   pulumi.StringMap{"memory": pulumi.String("128Mi")},
		},
	}
}

// SourceExporterCPURequest is the default (go run) path's CPU request. A new pod compiles the
// exporter with a cold build cache, about 30 s of CPU: at 100m, the first count came 6 min after
// the pod was created (BenchmarkExporterColdStart, CPU capped at the request), a gap in which
// KEDA holds the pool's size. At 500m it took 63 s; the prebuilt
// image (exporterImage) needs 50m and starts in about 2 s.
const SourceExporterCPURequest = "500m"

// runFromSource puts source into a ConfigMap and runs it with `go run` in ExporterGoImage.
func (p *exporterPod) runFromSource(ctx *pulumi.Context, o exporterObjects, source map[string]string) error {
	p.image = pulumi.String(contract.ExporterGoImage)
	items, digest := sourceItems(source)
	data := pulumi.StringMap{}
	for path, content := range source {
		data[ConfigMapKey(path)] = pulumi.String(content)
	}
	src, err := corev1.NewConfigMap(ctx, o.scope.Name(ExporterSourceConfigMap), &corev1.ConfigMapArgs{
		Metadata: o.meta(ExporterSourceConfigMap), Data: data,
	}, o.scope.Opts(ExporterSourceConfigMap, o.child...)...)
	if err != nil {
		return err
	}
	p.dependsOn = append(p.dependsOn, src)
	// A ConfigMap change does not restart pods; a changed digest in the template does.
	p.annotations[contract.ProjectName+"/source-sha256"] = pulumi.String(digest)
	p.command = pulumi.ToStringArray([]string{"go", "run", "./exporter/cmd/claim-exporter"})
	p.workingDir = pulumi.String(exporterSourceDir)
	p.volumes = append(p.volumes,
		corev1.VolumeArgs{Name: pulumi.String("source"), ConfigMap: &corev1.ConfigMapVolumeSourceArgs{
			Name: src.Metadata.Name(), Items: items,
		}},
		corev1.VolumeArgs{Name: pulumi.String("scratch"), EmptyDir: &corev1.EmptyDirVolumeSourceArgs{}},
	)
	p.mounts = append(p.mounts,
		corev1.VolumeMountArgs{Name: pulumi.String("source"), MountPath: pulumi.String(exporterSourceDir), ReadOnly: pulumi.Bool(true)},
		corev1.VolumeMountArgs{Name: pulumi.String("scratch"), MountPath: pulumi.String(exporterScratchDir)},
	)
	// The root FS is read-only, so everything the go command writes goes to the emptyDir;
	// GOPROXY=off and GOTOOLCHAIN=local prove the run downloads nothing.
	for k, v := range map[string]string{
		"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0",
		"HOME": exporterScratchDir + "/home", "GOPATH": exporterScratchDir + "/gopath",
		"GOCACHE": exporterScratchDir + "/gocache", "GOTMPDIR": exporterScratchDir,
	} {
		p.env = append(p.env, corev1.EnvVarArgs{Name: pulumi.String(k), Value: pulumi.String(v)})
	}
	// Compiling on first start needs more CPU and memory than serving does. No CPU limit: the
	// compile takes whatever idle CPU the node has; the request is what it is guaranteed.
	p.resources = corev1.ResourceRequirementsArgs{
		Requests: pulumi.StringMap{"cpu": pulumi.String(SourceExporterCPURequest), "memory": pulumi.String("256Mi")},
		Limits:   pulumi.StringMap{"memory": pulumi.String("1Gi")},
	}
	return nil
}

// newExporterDeployment runs pod.replicas locked-down replicas of pod as the ServiceAccount sa.
// Every replica lists the same claims, so each serves the same count; KEDA reads whichever the
// Service picks.
func newExporterDeployment(ctx *pulumi.Context, o exporterObjects, sa *corev1.ServiceAccount, pod *exporterPod, parent pulumi.Resource) (*appsv1.Deployment, error) {
	env := append(corev1.EnvVarArray{}, pod.env...)
	sort.Slice(env, func(i, j int) bool { return envName(env[i]) < envName(env[j]) })
	healthz := &corev1.ProbeArgs{
		// /healthz never calls the Kubernetes API: an API outage must not restart the pod and
		// lose the last good count it keeps serving.
		HttpGet:       &corev1.HTTPGetActionArgs{Path: pulumi.String("/healthz"), Port: pulumi.String("http")},
		PeriodSeconds: pulumi.Int(10), FailureThreshold: pulumi.Int(3),
	}
	return appsv1.NewDeployment(ctx, o.scope.Name(contract.ExporterName), &appsv1.DeploymentArgs{
		Metadata: o.meta(contract.ExporterName),
		Spec: appsv1.DeploymentSpecArgs{
			Replicas: pulumi.Int(pod.replicas),
			Selector: &metav1.LabelSelectorArgs{MatchLabels: exporterSelector},
			// A rollout starts the new pod before it stops an old one: never fewer serving.
			Strategy: &appsv1.DeploymentStrategyArgs{
				Type: pulumi.String("RollingUpdate"),
				RollingUpdate: &appsv1.RollingUpdateDeploymentArgs{
					MaxUnavailable: pulumi.Int(0), MaxSurge: pulumi.Int(1),
				},
			},
			Template: corev1.PodTemplateSpecArgs{
				Metadata: &metav1.ObjectMetaArgs{Labels: exporterLabels, Annotations: pod.annotations},
				Spec: corev1.PodSpecArgs{
					ServiceAccountName:           sa.Metadata.Name().Elem(),
					NodeSelector:                 pod.nodeSelector,
					AutomountServiceAccountToken: pulumi.Bool(false),
					// One node or zone lost takes one replica, not all; preferred, so a one-node
					// cluster still runs them all.
					TopologySpreadConstraints: corev1.TopologySpreadConstraintArray{
						spreadOver("kubernetes.io/hostname"), spreadOver("topology.kubernetes.io/zone"),
					},
					SecurityContext: &corev1.PodSecurityContextArgs{
						RunAsNonRoot:   pulumi.Bool(true),
						RunAsUser:      pulumi.Int(exporterUID),
						RunAsGroup:     pulumi.Int(exporterUID),
						FsGroup:        pulumi.Int(exporterUID),
						SeccompProfile: &corev1.SeccompProfileArgs{Type: pulumi.String("RuntimeDefault")},
					},
					Containers: corev1.ContainerArray{corev1.ContainerArgs{
						Name:       pulumi.String(contract.ExporterName),
						Image:      pod.image,
						Command:    pod.command,
						WorkingDir: pod.workingDir,
						Env:        env,
						Ports: corev1.ContainerPortArray{corev1.ContainerPortArgs{
							Name: pulumi.String("http"), ContainerPort: pulumi.Int(contract.ExporterPort),
						}},
						SecurityContext: &corev1.SecurityContextArgs{
							AllowPrivilegeEscalation: pulumi.Bool(false),
							ReadOnlyRootFilesystem:   pulumi.Bool(true),
							RunAsNonRoot:             pulumi.Bool(true),
							Capabilities:             &corev1.CapabilitiesArgs{Drop: pulumi.ToStringArray([]string{"ALL"})},
							SeccompProfile:           &corev1.SeccompProfileArgs{Type: pulumi.String("RuntimeDefault")},
						},
						// Allow a first `go run` compile (minutes on a small node) before liveness counts.
						StartupProbe: &corev1.ProbeArgs{
							HttpGet:       &corev1.HTTPGetActionArgs{Path: pulumi.String("/healthz"), Port: pulumi.String("http")},
							PeriodSeconds: pulumi.Int(5), FailureThreshold: pulumi.Int(120),
						},
						LivenessProbe:  healthz,
						ReadinessProbe: healthz,
						// A stopping replica keeps serving while the Service drops it: kube-proxy
						// learns of the termination a moment after the kubelet does. The sleep
						// action needs no binary in the image (Kubernetes 1.30+).
						Lifecycle: &corev1.LifecycleArgs{PreStop: &corev1.LifecycleHandlerArgs{
							Sleep: &corev1.SleepActionArgs{Seconds: pulumi.Int(exporterDrainSeconds)},
						}},
						Resources:    pod.resources,
						VolumeMounts: pod.mounts,
					}},
					Volumes: pod.volumes,
				},
			},
		},
	}, o.scope.Opts(contract.ExporterName, pulumi.Parent(parent), pulumi.DependsOn(pod.dependsOn))...)
}

func spreadOver(topologyKey string) corev1.TopologySpreadConstraintArgs {
	return corev1.TopologySpreadConstraintArgs{
		TopologyKey: pulumi.String(topologyKey), MaxSkew: pulumi.Int(1),
		WhenUnsatisfiable: pulumi.String("ScheduleAnyway"),
		LabelSelector:     &metav1.LabelSelectorArgs{MatchLabels: exporterSelector},
	}
}

// newExporterBudget lets a voluntary disruption take all exporter pods but one. Pods that are
// not Ready may always be evicted (AlwaysAllow), so a crash-looping replica never blocks a drain.
func newExporterBudget(ctx *pulumi.Context, o exporterObjects) (*policyv1.PodDisruptionBudget, error) {
	return policyv1.NewPodDisruptionBudget(ctx, o.scope.Name(contract.ExporterName), &policyv1.PodDisruptionBudgetArgs{
		Metadata: o.meta(contract.ExporterName),
		Spec: policyv1.PodDisruptionBudgetSpecArgs{
			MinAvailable:               pulumi.Int(1),
			Selector:                   &metav1.LabelSelectorArgs{MatchLabels: exporterSelector},
			UnhealthyPodEvictionPolicy: pulumi.String("AlwaysAllow"),
		},
	}, o.scope.Opts(contract.ExporterName, o.child...)...)
}

// newExporterService is the ClusterIP Service KEDA reads: nothing exposes the exporter further.
func newExporterService(ctx *pulumi.Context, o exporterObjects) (*corev1.Service, error) {
	return corev1.NewService(ctx, o.scope.Name(contract.ExporterName), &corev1.ServiceArgs{
		Metadata: o.meta(contract.ExporterName),
		Spec: corev1.ServiceSpecArgs{
			Type:     pulumi.String("ClusterIP"),
			Selector: exporterSelector,
			Ports: corev1.ServicePortArray{corev1.ServicePortArgs{
				Name: pulumi.String("http"), Port: pulumi.Int(contract.ExporterPort), TargetPort: pulumi.String("http"),
			}},
		},
	}, o.scope.Opts(contract.ExporterName, o.child...)...)
}

// tokenVolume replaces the automatic mount with a one-hour token (the automatic one lives far
// longer) at the standard path, with the CA and namespace files the in-cluster defaults read.
func tokenVolume() corev1.VolumeArgs {
	return corev1.VolumeArgs{
		Name: pulumi.String("token"),
		Projected: &corev1.ProjectedVolumeSourceArgs{
			Sources: corev1.VolumeProjectionArray{
				corev1.VolumeProjectionArgs{ServiceAccountToken: &corev1.ServiceAccountTokenProjectionArgs{
					Path: pulumi.String("token"), ExpirationSeconds: pulumi.Int(3600),
				}},
				corev1.VolumeProjectionArgs{ConfigMap: &corev1.ConfigMapProjectionArgs{
					Name:  pulumi.String("kube-root-ca.crt"),
					Items: corev1.KeyToPathArray{corev1.KeyToPathArgs{Key: pulumi.String("ca.crt"), Path: pulumi.String("ca.crt")}},
				}},
				corev1.VolumeProjectionArgs{DownwardAPI: &corev1.DownwardAPIProjectionArgs{
					Items: corev1.DownwardAPIVolumeFileArray{corev1.DownwardAPIVolumeFileArgs{
						Path:     pulumi.String("namespace"),
						FieldRef: &corev1.ObjectFieldSelectorArgs{FieldPath: pulumi.String("metadata.namespace")},
					}},
				}},
			},
		},
	}
}

// sourceItems maps each flattened key back to its path, in a stable order, and digests the source.
func sourceItems(source map[string]string) (corev1.KeyToPathArray, string) {
	paths := make([]string, 0, len(source))
	for p := range source {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	items := corev1.KeyToPathArray{}
	for _, p := range paths {
		items = append(items, corev1.KeyToPathArgs{Key: pulumi.String(ConfigMapKey(p)), Path: pulumi.String(p)})
		fmt.Fprintf(h, "%s\x00%s\x00", p, source[p])
	}
	return items, hex.EncodeToString(h.Sum(nil))
}

func envName(v corev1.EnvVarInput) string {
	if a, ok := v.(corev1.EnvVarArgs); ok {
		if s, ok := a.Name.(pulumi.String); ok {
			return string(s)
		}
	}
	return ""
}
