package program

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoPools is the README's two-pool example: a code interpreter and a browser agent.
const twoPools = `[
 {"name": "code", "template": {"image": "ghcr.io/acme/code-agent:1.4.2", "command": ["/agent"], "args": ["--serve"],
   "env": {"LOG_LEVEL": "info", "WORKERS": 2}, "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
   "readOnlyRootFilesystem": true, "scratch": {"mountPath": "/scratch", "sizeLimit": "2Gi"}},
  "minReplicas": 2, "maxReplicas": 20, "sizing": {"policy": "arrivals", "bootSeconds": 8}},
 {"name": "browser", "template": {"image": "ghcr.io/acme/browser-agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "runAsUser": 1000,
   "resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}, "maxReplicas": 5, "headroom": 1}
]`

func withConfig(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range existingAdoptConfig {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func TestEachListedPoolGetsItsNamespaceTemplatePoolAndScaledObject(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"pools": twoPools}))
	for _, p := range []struct{ name, ns string }{{"code", "warm-pool-autoscaling-keda-code"}, {"browser", "warm-pool-autoscaling-keda-browser"}} {
		ns := mustFind(t, rec, typeNamespace, p.ns)
		labels, _ := ns.Path("metadata", "labels")
		assert.Equal(t, "restricted", plainValue(labels).(map[string]any)["pod-security.kubernetes.io/enforce"])
		tpl := mustFind(t, rec, typeTemplate, p.name+"-agent")
		assert.Equal(t, p.ns, inputStr(t, tpl, "metadata", "namespace"))
		pool := mustFind(t, rec, typePool, p.name)
		assert.Equal(t, p.ns, inputStr(t, pool, "metadata", "namespace"))
		so := mustFind(t, rec, typeScaledObject, p.name)
		assert.Equal(t, p.ns, inputStr(t, so, "metadata", "namespace"))
		assert.Equal(t, p.name, inputStr(t, so, "spec", "scaleTargetRef", "name"))
		triggers, _ := so.Path("spec", "triggers")
		url := plainValue(triggers).([]any)[0].(map[string]any)["metadata"].(map[string]any)["url"]
		assert.Equal(t, "http://claim-exporter.warm-pool-autoscaling-keda.svc.cluster.local:8080/demand/"+p.name, url)
	}
	// The exporter stays one Deployment, in the stack's namespace.
	mustFind(t, rec, typeNamespace, "warm-pool-autoscaling-keda")
	assert.Len(t, rec.Find(typeDeployment, ""), 1)
	assert.Equal(t, 2, inputInt(t, mustFind(t, rec, typeScaledObject, "code"), "spec", "minReplicaCount"))
	assert.Equal(t, 1, inputInt(t, mustFind(t, rec, typeScaledObject, "browser"), "spec", "minReplicaCount"), "the top-level floor is each entry's default")
}

// The exporter reads each pool's claims through a Role in that pool's namespace, bound to its one
// ServiceAccount; there is no ClusterRole, and EXPORTER_POOLS names every pool with its windows.
func TestExporterReadsEachPoolThroughARoleInItsNamespace(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"pools": twoPools}))
	assert.Empty(t, rec.Find("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", ""))
	for _, p := range []struct{ name, ns string }{{"code", "warm-pool-autoscaling-keda-code"}, {"browser", "warm-pool-autoscaling-keda-browser"}} {
		role := mustFind(t, rec, typeRole, "claim-exporter-"+p.name)
		assert.Equal(t, p.ns, inputStr(t, role, "metadata", "namespace"))
		rules, _ := role.Path("rules")
		assert.Equal(t, []any{map[string]any{
			"apiGroups": []any{"extensions.agents.x-k8s.io"}, "resources": []any{"sandboxclaims"}, "verbs": []any{"get", "list"},
		}}, plainValue(rules))
		binding := mustFind(t, rec, typeRoleBinding, "claim-exporter-"+p.name)
		assert.Equal(t, p.ns, inputStr(t, binding, "metadata", "namespace"))
		subjects, _ := binding.Path("subjects")
		assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": "claim-exporter", "namespace": "warm-pool-autoscaling-keda"}}, plainValue(subjects))
	}
	assert.Len(t, rec.Find(typeRole, ""), 2, "one Role per pool namespace, none elsewhere")
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	env, _ := dep.Path("spec", "template", "spec", "containers")
	var pools string
	for _, e := range plainValue(env).([]any)[0].(map[string]any)["env"].([]any) {
		if e.(map[string]any)["name"] == "EXPORTER_POOLS" {
			pools = e.(map[string]any)["value"].(string)
		}
	}
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(pools), &got), "EXPORTER_POOLS: %q", pools)
	assert.Equal(t, []map[string]any{
		{"name": "code", "namespace": "warm-pool-autoscaling-keda-code", "arrivalWindowsSeconds": []any{30.0, 180.0}},
		{"name": "browser", "namespace": "warm-pool-autoscaling-keda-browser"},
	}, got)
}

func TestTemplateFromConfig(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"pools": twoPools}))
	tpl := mustFind(t, rec, typeTemplate, "code-agent")
	pod, _ := tpl.Path("spec", "podTemplate")
	spec := plainValue(pod).(map[string]any)["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, "ghcr.io/acme/code-agent:1.4.2", c["image"])
	assert.Equal(t, []any{"/agent"}, c["command"])
	assert.Equal(t, []any{"--serve"}, c["args"])
	assert.Equal(t, []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}, map[string]any{"name": "WORKERS", "value": "2"}}, c["env"])
	assert.Equal(t, map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}, "limits": map[string]any{"memory": "2Gi"}}, c["resources"])
	assert.Equal(t, true, c["securityContext"].(map[string]any)["readOnlyRootFilesystem"])
	assert.Equal(t, []any{map[string]any{"name": "scratch", "mountPath": "/scratch"}}, c["volumeMounts"])
	assert.Equal(t, []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{"sizeLimit": "2Gi"}}}, spec["volumes"])
	// The isolation stays the program's.
	assert.Equal(t, "isolated-sandbox", spec["runtimeClassName"])
	assert.Equal(t, false, spec["automountServiceAccountToken"])
	assert.Equal(t, map[string]any{"sandbox.amazonaws.com/network-isolated": "true", "karpenter.sh/do-not-disrupt": "true"},
		plainValue(pod).(map[string]any)["metadata"].(map[string]any)["annotations"])
	assert.Empty(t, restrictedViolations(t, plainValue(pod)))

	browser := mustFind(t, rec, typeTemplate, "browser-agent")
	bpod, _ := browser.Path("spec", "podTemplate")
	assert.Equal(t, 1000.0, plainValue(bpod).(map[string]any)["spec"].(map[string]any)["securityContext"].(map[string]any)["runAsUser"])
	assert.Empty(t, restrictedViolations(t, plainValue(bpod)))
}

// The shorthand's `template` key sets the one pool's agent; unset, the placeholder is unchanged
// (TestWarmPodsAreIsolatedSandboxes holds its exact shape).
func TestShorthandTemplate(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"template": `{"image": "registry.example.com/agent:2", "resources": {"requests": {"memory": "512Mi"}}}`}))
	tpl := mustFind(t, rec, typeTemplate, "warm-pool-agent")
	c, _ := tpl.Path("spec", "podTemplate", "spec", "containers")
	container := plainValue(c).([]any)[0].(map[string]any)
	assert.Equal(t, "registry.example.com/agent:2", container["image"])
	assert.NotContains(t, container, "command", "the placeholder's command goes with the placeholder's image")
}

// Every isolation invariant is refused when a config tries to set it, naming the field and the fix;
// a template the namespace's Pod Security level would reject is refused before any resource.
func TestTemplateCannotBreakTheIsolation(t *testing.T) {
	cases := map[string]struct{ template, want string }{
		"runtime class":       {`{"runtimeClassName": "runc"}`, "template.runtimeClassName cannot be configured: the RuntimeClass is always isolated-sandbox"},
		"network annotation":  {`{"annotations": {"sandbox.amazonaws.com/network-isolated": "false"}}`, "template.annotations cannot be configured"},
		"token":               {`{"automountServiceAccountToken": true}`, "template.automountServiceAccountToken cannot be configured: a sandbox never gets a ServiceAccount token"},
		"security context":    {`{"securityContext": {"privileged": true}}`, "template.securityContext cannot be configured"},
		"host network":        {`{"hostNetwork": true}`, "template.hostNetwork cannot be configured"},
		"root":                {`{"runAsUser": 0}`, "template.runAsUser is 0; a sandbox runs as a non-root user"},
		"unknown key":         {`{"imagee": "x:1"}`, "template.imagee is not a key the program knows"},
		"unpinned image":      {`{"image": "ghcr.io/acme/agent"}`, `template.image "ghcr.io/acme/agent" has no pinned tag`},
		"latest image":        {`{"image": "ghcr.io/acme/agent:latest"}`, `template.image "ghcr.io/acme/agent:latest" has no pinned tag`},
		"bad image":           {`{"image": "UPPER::"}`, `template.image "UPPER::" is not an image reference`},
		"bad quantity":        {`{"resources": {"requests": {"memory": "lots"}}}`, `template.resources.requests.memory is "lots", which is not a Kubernetes quantity`},
		"gpu":                 {`{"resources": {"requests": {"nvidia.com/gpu": "1"}}}`, `template.resources.requests has "nvidia.com/gpu"`},
		"request above limit": {`{"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}`, "template.resources.requests.memory (2Gi) is above resources.limits.memory (1Gi)"},
		"relative scratch":    {`{"scratch": {"mountPath": "scratch"}}`, `template.scratch.mountPath "scratch" must be an absolute path`},
		"env name":            {`{"env": {"1BAD": "x"}}`, `template.env has "1BAD"`},
		"command not a list":  {`{"command": "/agent"}`, "template.command must be a list of strings"},
		// What the API server would refuse after the namespace exists, refused here instead.
		"UID beyond 32 bits": {`{"runAsUser": 2147483648}`, "template.runAsUser is 2147483648, which the API server rejects"},
		"negative request":   {`{"resources": {"requests": {"memory": "-1Gi"}}}`, `template.resources.requests.memory is "-1Gi"; a quantity the API server accepts is not negative`},
		"negative limit":     {`{"resources": {"limits": {"cpu": "-500m"}}}`, `template.resources.limits.cpu is "-500m"; a quantity the API server accepts is not negative`},
		"negative scratch":   {`{"scratch": {"mountPath": "/scratch", "sizeLimit": "-1Gi"}}`, `template.scratch.sizeLimit is "-1Gi"; give a positive size`},
		// An empty image used to read as "no template": the placeholder replaced every setting.
		"empty image": {`{"image": "", "resources": {"requests": {"memory": "4Gi"}}}`, "template.image is empty; give your agent's image"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := runProgram(t, withConfig(map[string]string{"template": c.template}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()), "nothing may be registered before the config is valid")
		})
		t.Run(name+" in a listed pool", func(t *testing.T) {
			_, err := runProgram(t, withConfig(map[string]string{"pools": `[{"name": "a", "template": ` + c.template + `}]`}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "pools[0]."+c.want)
		})
	}
}

// The Pod Security evaluation runs on the pod the program renders: a root UID is refused by the
// admission library too, not only by the program's own rule.
func TestTemplateIsJudgedByPodSecurityAdmission(t *testing.T) {
	_, err := runProgram(t, withConfig(map[string]string{"template": `{"runAsUser": 0}`}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "template would be rejected by the namespace's Pod Security level (restricted): runAsUser=0")
}

func TestPoolListRules(t *testing.T) {
	cases := map[string]struct{ pools, extraKey, extraValue, want string }{
		"no name":               {`[{"maxReplicas": 3}]`, "", "", `pools[0].name "" is not a valid Kubernetes object name`},
		"same name twice":       {`[{"name": "a"}, {"name": "a"}]`, "", "", `pools[1].name "a" is also pools[0].name; every pool needs its own name`},
		"same template":         {`[{"name": "a", "templateName": "t"}, {"name": "b", "templateName": "t"}]`, "", "", `pools[1].templateName "t" is also pools[0].templateName`},
		"same namespace":        {`[{"name": "a", "namespace": "n"}, {"name": "b", "namespace": "n"}]`, "", "", `pools[1].namespace "n" is also pools[0].namespace`},
		"the stack namespace":   {`[{"name": "a", "namespace": "warm-pool-autoscaling-keda"}]`, "", "", `pools[0].namespace is "warm-pool-autoscaling-keda", the stack's namespace`},
		"reserved namespace":    {`[{"name": "a", "namespace": "kube-system"}]`, "", "", `pools[0].namespace "kube-system" belongs to Kubernetes`},
		"bounds per pool":       {`[{"name": "a", "minReplicas": 5, "maxReplicas": 2}]`, "", "", "pools[0].minReplicas (5) is greater than maxReplicas (2)"},
		"typo":                  {`[{"name": "a", "maxReplica": 2}]`, "", "", "pools[0].maxReplica is not a key the program knows"},
		"empty list":            {`[]x`, "", "", "pools is not a list"},
		"shorthand beside":      {`[{"name": "a"}]`, "poolName", "b", "poolName is a key of the one-pool shorthand, and pools is set"},
		"sizing policy":         {`[{"name": "a", "sizing": {"policy": "magic"}}]`, "", "", `pools[0].sizing.policy is "magic"`},
		"warm-hit target":       {`[{"name": "a", "sizing": {"policy": "arrivals", "warmHitTarget": "1"}}]`, "", "", "pools[0].sizing.warmHitTarget"},
		"short window":          {`[{"name": "a", "sizing": {"policy": "arrivals", "shortWindowSeconds": 5}}]`, "", "", "pools[0].sizing.shortWindowSeconds is 5; it must be at least sizing.hpaSyncSeconds (15"},
		"windows in order":      {`[{"name": "a", "sizing": {"policy": "arrivals", "shortWindowSeconds": 60, "longWindowSeconds": 60}}]`, "", "", "pools[0].sizing.longWindowSeconds is 60; it must be above shortWindowSeconds (60)"},
		"target with arrivals":  {`[{"name": "a", "targetValue": "2", "sizing": {"policy": "arrivals"}}]`, "", "", `pools[0].targetValue is "2" with sizing.policy=arrivals`},
		"node launch":           {`[{"name": "a", "sizing": {"policy": "arrivals", "nodeLaunchSeconds": 901}}]`, "", "", "pools[0].sizing.nodeLaunchSeconds is 901; set the seconds a new node takes"},
		"sandboxes per node":    {`[{"name": "a", "sizing": {"policy": "arrivals", "sandboxesPerNode": 0}}]`, "", "", "pools[0].sizing.sandboxesPerNode is 0; set how many sandboxes fit on one node (1 rounds nothing), 1..110"},
		"node keys with claims": {`[{"name": "a", "sizing": {"sandboxesPerNode": 8}}]`, "", "", "pools[0].sizing.sandboxesPerNode is set with sizing.policy=claims, which does not read it"},
		"schedule with claims":  {`[{"name": "a", "sizing": {"schedule": [{"start": "0 8 * * *", "end": "0 18 * * *", "warm": 2}]}}]`, "", "", "pools[0].sizing.schedule is set with sizing.policy=claims"},
		"schedule not a list":   {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": {"start": "0 8 * * *"}}}]`, "", "", "pools[0].sizing.schedule must be a list of objects"},
		"schedule cron":         {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": [{"start": "@daily", "end": "0 18 * * *", "warm": 2}]}}]`, "", "", `pools[0].sizing.schedule[0]: start "@daily" is not a five-field cron expression`},
		"schedule seconds":      {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": [{"start": "0 0 8 * * *", "end": "0 18 * * *", "warm": 2}]}}]`, "", "", `pools[0].sizing.schedule[0]: start "0 0 8 * * *" is not a five-field cron expression`},
		"schedule same ends":    {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": [{"start": "0 8 * * *", "end": "0 8 * * *", "warm": 2}]}}]`, "", "", `pools[0].sizing.schedule[0]: start and end are both "0 8 * * *"`},
		"schedule zone":         {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": [{"start": "0 8 * * *", "end": "0 18 * * *", "timezone": "Mars/Olympus", "warm": 2}]}}]`, "", "", `pools[0].sizing.schedule[0]: timezone "Mars/Olympus" is not an IANA time zone name`},
		"schedule warm":         {`[{"name": "a", "maxReplicas": 5, "sizing": {"policy": "arrivals", "schedule": [{"start": "0 8 * * *", "end": "0 18 * * *", "warm": 6}]}}]`, "", "", "pools[0].sizing.schedule[0].warm is 6; set the warm sandboxes the window keeps at least, 1..maxReplicas (5)"},
		"schedule typo":         {`[{"name": "a", "sizing": {"policy": "arrivals", "schedule": [{"start": "0 8 * * *", "end": "0 18 * * *", "warm": 2, "replicas": 2}]}}]`, "", "", "pools[0].sizing.schedule[0].replicas is not a key the program knows"},
		"replicas beyond int32": {`[{"name": "a", "maxReplicas": 2147483648}]`, "", "", "pools[0].maxReplicas is 2147483648; it must be at least 1 and at most 2147483647"},
		// Accepted by the program's own rules, refused by the exporter's parser, which the program runs.
		"a name the exporter refuses": {`[{"name": "a.b", "namespace": "agents-ab"}]`, "", "",
			`the claim exporter would refuse the pool list the program renders for it (its pool N is pools[N-1]): EXPORTER_POOLS: pool 1 (name "a.b"): name is not a DNS label`},
		"a selector the exporter refuses": {`[{"name": "a"}, {"name": "b", "claimSelector": " app=b"}]`, "", "",
			`pool 2 (name "b"): selector " app=b" has surrounding or control whitespace`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := withConfig(map[string]string{"pools": c.pools})
			if c.extraKey != "" {
				cfg[c.extraKey] = c.extraValue
			}
			rec, err := runProgram(t, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Empty(t, registeredTypes(rec.All()))
		})
	}
}

// The arrivals policy renders two triggers read by name and the formula, and asks the exporter
// for the windows the formula divides by.
func TestArrivalsSizingRendersItsFormula(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"sizing": `{"policy": "arrivals", "bootSeconds": 10, "warmHitTarget": "0.95"}`}))
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	triggers, _ := so.Path("spec", "triggers")
	var names, locations []any
	for _, tr := range plainValue(triggers).([]any) {
		names = append(names, tr.(map[string]any)["name"])
		locations = append(locations, tr.(map[string]any)["metadata"].(map[string]any)["valueLocation"])
	}
	assert.Equal(t, []any{"arrivals_short", "arrivals_long"}, names)
	assert.Equal(t, []any{"arrivals_short", "arrivals_long"}, locations)
	formula := inputStr(t, so, "spec", "advanced", "scalingModifiers", "formula")
	// L = the boot, 10 s; windows 30 and 180 s; z(0.95) = 1.644854.
	assert.Equal(t, "float((max(arrivals_short * 0.333333, arrivals_long * 0.055556) > 0 ? ceil(max(arrivals_short * 0.333333, arrivals_long * 0.055556) + 1.644854 * max(arrivals_short * 0.333333, arrivals_long * 0.055556) ** 0.5 + 0.784257) : 0) + 0)", formula)
	// The one pool keeps its Role's name and its /demand URL; the exporter learns the windows.
	mustFind(t, rec, typeRole, "claim-exporter")
	dep := mustFind(t, rec, typeDeployment, "claim-exporter")
	c, _ := dep.Path("spec", "template", "spec", "containers")
	assert.Contains(t, jsonOf(t, plainValue(c)), `[{\"name\":\"warm-pool\",\"namespace\":\"warm-pool-autoscaling-keda\",\"arrivalWindowsSeconds\":[30,180]}]`)
	url := plainValue(triggers).([]any)[0].(map[string]any)["metadata"].(map[string]any)["url"]
	assert.Equal(t, "http://claim-exporter.warm-pool-autoscaling-keda.svc.cluster.local:8080/demand", url)
}

// Rounded to whole nodes and with a schedule, the arrivals policy adds the claims trigger and a
// cron trigger per window, and its formula reads them all by name.
func TestArrivalsSizingRoundsToNodesWithASchedule(t *testing.T) {
	rec := mustRunProgram(t, withConfig(map[string]string{"maxReplicas": "20", "sizing": `{"policy": "arrivals", "bootSeconds": 10, "nodeLaunchSeconds": 20, "sandboxesPerNode": 8,
		"schedule": [{"start": "0 8 * * 1-5", "end": "0 18 * * 1-5", "timezone": "Europe/Berlin", "warm": 6}, {"start": "30 22 * * *", "end": "0 6 * * *", "warm": 1}]}`}))
	so := mustFind(t, rec, typeScaledObject, "warm-pool")
	triggers, _ := so.Path("spec", "triggers")
	var names, types []any
	for _, tr := range plainValue(triggers).([]any) {
		names = append(names, tr.(map[string]any)["name"])
		types = append(types, tr.(map[string]any)["type"])
	}
	assert.Equal(t, []any{"arrivals_short", "arrivals_long", "claims", "schedule_0", "schedule_1"}, names)
	assert.Equal(t, []any{"metrics-api", "metrics-api", "metrics-api", "cron", "cron"}, types)
	all := plainValue(triggers).([]any)
	assert.Equal(t, "active_claims", all[2].(map[string]any)["metadata"].(map[string]any)["valueLocation"])
	assert.Equal(t, map[string]any{"timezone": "Europe/Berlin", "start": "0 8 * * 1-5", "end": "0 18 * * 1-5", "desiredReplicas": "6"}, all[3].(map[string]any)["metadata"])
	assert.Equal(t, "UTC", all[4].(map[string]any)["metadata"].(map[string]any)["timezone"], "a window without a zone is read in UTC")
	formula := inputStr(t, so, "spec", "advanced", "scalingModifiers", "formula")
	// L = boot 10 s + node launch 20 s = 30 s: the short window's factor is 1, the long's 1/6.
	m := "max(arrivals_short * 1, arrivals_long * 0.166667)"
	assert.Equal(t, "float(8 * ceil((claims + max(("+m+" > 0 ? ceil("+m+" + 2.326348 * "+m+" ** 0.5 + 1.235316) : 0) + 0, schedule_0, schedule_1)) / 8) - claims)", formula)
}

func jsonOf(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// The CLI hands the program Pulumi.yaml's defaults as if the stack had set them: beside a pools
// list those defaults are not the shorthand's keys being set (the e2e's first up found this).
func TestPulumiYamlDefaultsBesideAPoolsList(t *testing.T) {
	_, err := runProgram(t, withConfig(map[string]string{
		"pools": twoPools, "poolName": "warm-pool", "templateName": "warm-pool-agent", "template": "{}",
		"sizing": "{}", "headroom": "0", "activationTargetValue": "", "claimSelector": "", "exporterUrl": "",
	}))
	require.NoError(t, err)
	rec := mustRunProgram(t, withConfig(map[string]string{"template": "{}", "sizing": "{}", "pools": "[]"}))
	mustFind(t, rec, typeTemplate, "warm-pool-agent")
}

// A pool list too long for one environment variable (the kernel's 128 KiB) is refused at preview
// with the sizes, instead of an exporter container that cannot start.
func TestPoolListMustFitTheExportersEnvironment(t *testing.T) {
	var selector []string
	for i := range 8 {
		selector = append(selector, fmt.Sprintf("label-%d=%s", i, strings.Repeat("v", 60)))
	}
	var pools []string
	for i := range 260 {
		pools = append(pools, fmt.Sprintf(`{"name": "pool-%d", "claimSelector": %q}`, i, strings.Join(selector, ",")))
	}
	rec, err := runProgram(t, withConfig(map[string]string{"pools": "[" + strings.Join(pools, ",") + "]"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the 260 pools render to a")
	assert.Contains(t, err.Error(), "above the 131072 bytes the kernel allows one environment variable")
	assert.Empty(t, registeredTypes(rec.All()))
}
