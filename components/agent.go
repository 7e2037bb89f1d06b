package components

import (
	"slices"
	"sort"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
)

// Agent is what a platform team configures of a sandbox: the container that runs their agent.
// Everything that makes the pod an isolated sandbox (the RuntimeClass, no network, no
// ServiceAccount token, do-not-disrupt, the restricted security settings) is the program's and
// is not part of this type, so no configuration can take it away.
type Agent struct {
	Image      string
	Command    []string
	Args       []string
	WorkingDir string
	Env        map[string]string
	// Unknown holds the values a preview does not know yet (they come from resources still to be
	// created), by field: "image", "env.NAME"; the fields above hold stand-ins for them.
	Unknown map[string]pulumi.StringInput
	// SecretEnv names the Env values that are secrets (a component's secret inputs): they are
	// rendered as secret values, so the engine keeps them encrypted in the state.
	SecretEnv []string
	// Requests and Limits map a resource name (cpu, memory, ephemeral-storage) to a quantity.
	// A VM-isolated sandbox reserves its memory request when it boots: it decides cost and packing.
	Requests map[string]string
	Limits   map[string]string
	// RunAsUser is the agent's UID; 0 (root) is refused by the namespace's restricted level.
	RunAsUser              int
	ReadOnlyRootFilesystem bool
	// Scratch, when ScratchMountPath is set, is a writable emptyDir for an agent whose root is read-only.
	ScratchMountPath string
	ScratchSizeLimit string
}

// AgentContainerName is the sandbox pod's one container.
const AgentContainerName = "agent"

// DefaultAgent is the blueprint's placeholder: busybox that only stays up.
func DefaultAgent() Agent {
	return Agent{Image: contract.WarmPodImage, Command: []string{"sleep", "infinity"}, RunAsUser: SandboxUID}
}

// value is the field's value: its Output when a preview does not know it yet, else the text.
func (a Agent) value(field, text string) pulumi.StringInput {
	if v, ok := a.Unknown[field]; ok {
		return v
	}
	return pulumi.String(text)
}

// podSpec renders the sandbox pod's spec: the agent's container inside the isolation the program
// fixes. The restricted Pod Security level is met whatever the agent sets.
func (a Agent) podSpec(runtimeClassName string) pulumi.Map {
	container := pulumi.Map{
		"name":            pulumi.String(AgentContainerName),
		"image":           a.value("image", a.Image),
		"imagePullPolicy": pulumi.String("IfNotPresent"),
		"securityContext": a.containerSecurity(),
	}
	if len(a.Command) > 0 {
		container["command"] = pulumi.ToStringArray(a.Command)
	}
	if len(a.Args) > 0 {
		container["args"] = pulumi.ToStringArray(a.Args)
	}
	if a.WorkingDir != "" {
		container["workingDir"] = pulumi.String(a.WorkingDir)
	}
	if len(a.Env) > 0 {
		names := make([]string, 0, len(a.Env))
		for n := range a.Env {
			names = append(names, n)
		}
		sort.Strings(names) // a stable order: no diff on every run
		env := pulumi.Array{}
		for _, n := range names {
			var value pulumi.Input = a.value("env."+n, a.Env[n])
			if slices.Contains(a.SecretEnv, n) {
				value = pulumi.ToSecret(value)
			}
			env = append(env, pulumi.Map{"name": pulumi.String(n), "value": value})
		}
		container["env"] = env
	}
	if len(a.Requests) > 0 || len(a.Limits) > 0 {
		res := pulumi.Map{}
		if len(a.Requests) > 0 {
			res["requests"] = pulumi.ToStringMap(a.Requests)
		}
		if len(a.Limits) > 0 {
			res["limits"] = pulumi.ToStringMap(a.Limits)
		}
		container["resources"] = res
	}
	spec := pulumi.Map{
		"runtimeClassName": pulumi.String(runtimeClassName),
		// The agent talks to nothing in the cluster (it has no network): no token.
		"automountServiceAccountToken": pulumi.Bool(false),
		// What the namespace's restricted Pod Security level requires of every pod.
		"securityContext": pulumi.Map{
			"runAsNonRoot":   pulumi.Bool(true),
			"runAsUser":      pulumi.Int(a.RunAsUser),
			"runAsGroup":     pulumi.Int(a.RunAsUser),
			"seccompProfile": pulumi.Map{"type": pulumi.String("RuntimeDefault")},
		},
	}
	if a.ScratchMountPath != "" {
		emptyDir := pulumi.Map{}
		if a.ScratchSizeLimit != "" {
			emptyDir["sizeLimit"] = pulumi.String(a.ScratchSizeLimit)
		}
		spec["volumes"] = pulumi.Array{pulumi.Map{"name": pulumi.String("scratch"), "emptyDir": emptyDir}}
		container["volumeMounts"] = pulumi.Array{pulumi.Map{"name": pulumi.String("scratch"), "mountPath": pulumi.String(a.ScratchMountPath)}}
		// The emptyDir is owned by the pod's group, so a non-root agent can write it.
		spec["securityContext"].(pulumi.Map)["fsGroup"] = pulumi.Int(a.RunAsUser)
	}
	spec["containers"] = pulumi.Array{container}
	return spec
}

func (a Agent) containerSecurity() pulumi.Map {
	sc := pulumi.Map{
		"allowPrivilegeEscalation": pulumi.Bool(false),
		"capabilities":             pulumi.Map{"drop": pulumi.ToStringArray([]string{"ALL"})},
		"runAsNonRoot":             pulumi.Bool(true),
		"seccompProfile":           pulumi.Map{"type": pulumi.String("RuntimeDefault")},
	}
	if a.ReadOnlyRootFilesystem {
		sc["readOnlyRootFilesystem"] = pulumi.Bool(true)
	}
	return sc
}

// SandboxPodAnnotations mark a sandbox pod as the isolation requires: no NIC at all (nothing
// to restrict; exec and logs still work), and an idle warm pod must not invite consolidation.
func SandboxPodAnnotations() map[string]string {
	return map[string]string{
		"sandbox.amazonaws.com/network-isolated": "true",
		"karpenter.sh/do-not-disrupt":            "true",
	}
}

// SandboxPodTemplate is the pod template a SandboxTemplate carries for agent, as plain values:
// the program checks it against Pod Security before anything is created.
func SandboxPodTemplate(agent Agent, runtimeClassName string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"annotations": toAny(pulumi.ToStringMap(SandboxPodAnnotations()))},
		"spec":     toAny(agent.podSpec(runtimeClassName)),
	}
}

// toAny turns the plain pulumi values the pod spec is built from into Go values.
func toAny(v pulumi.Input) any {
	switch x := v.(type) {
	case pulumi.Map:
		m := map[string]any{}
		for k, e := range x {
			m[k] = toAny(e)
		}
		return m
	case pulumi.StringMap:
		m := map[string]any{}
		for k, e := range x {
			m[k] = toAny(e)
		}
		return m
	case pulumi.Array:
		a := []any{}
		for _, e := range x {
			a = append(a, toAny(e))
		}
		return a
	case pulumi.StringArray:
		a := []any{}
		for _, e := range x {
			a = append(a, toAny(e))
		}
		return a
	case pulumi.String:
		return string(x)
	case pulumi.Int:
		return int(x)
	case pulumi.Bool:
		return bool(x)
	}
	return nil
}
