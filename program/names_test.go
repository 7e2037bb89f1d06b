package program

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"warmpool.local/warm-pool-autoscaling-keda/mockgraph"
)

var updateNames = flag.Bool("update", false, "write testdata/names.json from the graphs instead of comparing")

// namesFile holds, for each stack below, every URN it registers and the Kubernetes object each
// names: a renamed resource is a replaced one in every stack that already runs, so a change to
// this file is a change to what `pulumi up` does to existing stacks.
const namesFile = "testdata/names.json"

// programStacks are program stacks that together register every kind of resource the program
// makes (create mode with its nodes and access, an existing cluster installing everything with
// listed pools and monitoring, one adopting, and one building the exporter's image).
var programStacks = map[string]struct {
	cfg     map[string]string
	prepare []func(*mockgraph.Recorder)
}{
	"create": {cfg: platformConfig},
	"create-pools-monitoring": {cfg: map[string]string{"pools": twoSizedPools, "monitoring": `{"serviceMonitor":true,"rules":true}`, "keda": `{"serviceMonitor":true}`, "exporterReplicas": "2"},
		prepare: []func(*mockgraph.Recorder){withPrometheusOperator}},
	"existing-adopt": {cfg: existingAdoptConfig},
	"existing-install-pools-monitoring": {cfg: map[string]string{"clusterMode": "existing", "kubeconfig": mockKubeconfig, "kubeContext": "local",
		"runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu", "exporterReplicas": "3",
		"pools":      `[{"name":"a","namespace":"pool-a"},{"name":"b","namespace":"pool-b","minReplicas":0,"sizing":{"policy":"arrivals","bootSeconds":8}}]`,
		"monitoring": `{"serviceMonitor":true,"rules":true}`, "keda": `{"serviceMonitor":true}`},
		prepare: []func(*mockgraph.Recorder){withPrometheusOperator}},
	"existing-image-preview": {cfg: withConfig(map[string]string{"exporterImageRepository": "ghcr.io/acme/claim-exporter"}),
		prepare: []func(*mockgraph.Recorder){func(r *mockgraph.Recorder) { r.Preview = true }}},
}

// componentStacks are stacks holding one AutoscaledWarmPool "team", adopting and installing.
var componentStacks = map[string]struct {
	inputs  map[string]string
	prepare []func(*mockgraph.Recorder)
}{
	"component-adopt": {inputs: map[string]string{"agentSandboxMode": "adopt", "kedaMode": "adopt"}},
	"component-install-pools-monitoring": {inputs: map[string]string{
		"runtimeClassMode": "create", "runtimeClassHandler": "kata-qemu", "exporterReplicas": "2",
		"pools":      `[{"name":"a","namespace":"pool-a"},{"name":"b","namespace":"pool-b","minReplicas":0,"sizing":{"policy":"arrivals","bootSeconds":8}}]`,
		"monitoring": `{"serviceMonitor":true,"rules":true}`, "keda": `{"serviceMonitor":true}`},
		prepare: []func(*mockgraph.Recorder){withPrometheusOperator}},
	"component-image-preview": {inputs: map[string]string{"agentSandboxMode": "adopt", "kedaMode": "adopt", "exporterImageRepository": "ghcr.io/acme/claim-exporter"},
		prepare: []func(*mockgraph.Recorder){func(r *mockgraph.Recorder) { r.Preview = true }}},
}

// registeredNames is each registration's URN and, for a Kubernetes object, the object it names
// ("<namespace>/<name>", a read by its ID, a Helm release by its name), sorted.
func registeredNames(rec *mockgraph.Recorder) []string {
	var out []string
	for _, r := range rec.All() {
		out = append(out, r.URN+kubernetesName(r))
	}
	slices.Sort(out)
	return out
}

func kubernetesName(r mockgraph.Resource) string {
	if !strings.HasPrefix(r.Type, "kubernetes:") {
		return ""
	}
	if r.Read {
		return " -> " + r.ID
	}
	str := func(keys ...string) string {
		v, ok := r.Path(keys...)
		if !ok {
			return ""
		}
		if v.IsSecret() {
			v = v.SecretValue().Element
		}
		if v.IsComputed() || v.IsOutput() {
			return "<unknown>"
		}
		return fmt.Sprint(v.Mappable())
	}
	name, namespace := str("metadata", "name"), str("metadata", "namespace")
	if r.Type == typeChart {
		name, namespace = str("name"), str("namespace")
	}
	if name == "" {
		return ""
	}
	return " -> " + namespace + "/" + name
}

// TestStackNamesAreTheOnesStacksAlreadyHave holds the program's stacks to the URNs and
// Kubernetes names in namesFile, and a stack with one component to them through its aliases:
// its resources are named after it now, and each has an alias to the URN it had, so the
// engine moves it rather than replacing it.
func TestStackNamesAreTheOnesStacksAlreadyHave(t *testing.T) {
	got := map[string][]string{}
	for name, s := range programStacks {
		rec, err := runProgram(t, s.cfg, s.prepare...)
		require.NoError(t, err, name)
		got[name] = registeredNames(rec)
	}
	components := map[string]*mockgraph.Recorder{}
	for name, s := range componentStacks {
		rec, _, err := runComponent(t, s.inputs, s.prepare...)
		require.NoError(t, err, name)
		components[name] = rec
	}
	if *updateNames {
		for name, rec := range components {
			got[name] = registeredNames(rec)
		}
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(namesFile, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(namesFile)
	require.NoError(t, err)
	var want map[string][]string
	require.NoError(t, json.Unmarshal(b, &want))
	for name := range programStacks {
		assert.Equalf(t, want[name], got[name], "the program's stack %s: every URN and Kubernetes name as before", name)
	}
	for name, rec := range components {
		assertAliasedToTheNamesItHad(t, name, rec, want[name])
	}
}

// assertAliasedToTheNamesItHad: every registration but a read has, as its URN or an alias, one
// of the URNs in had, with the same Kubernetes name, and every one of those is reached by one
// registration. A read's URN may change (the engine forgets a read it no longer makes, and
// touches nothing), but it reads the same objects. (In had, a read's Kubernetes name is its ID,
// without the "/" of "<namespace>/<name>".)
func assertAliasedToTheNamesItHad(t *testing.T, stack string, rec *mockgraph.Recorder, had []string) {
	t.Helper()
	var wantReached, wantReads, reached, gotReads []string
	for _, h := range had {
		if _, k8s, ok := strings.Cut(h, " -> "); ok && !strings.Contains(k8s, "/") {
			wantReads = append(wantReads, k8s)
		} else {
			wantReached = append(wantReached, h)
		}
	}
	for _, r := range rec.All() {
		if r.Read {
			gotReads = append(gotReads, r.ID)
			continue
		}
		var matched []string
		for _, u := range append([]string{r.URN}, r.Aliases...) {
			if name := u + kubernetesName(r); slices.Contains(had, name) && !slices.Contains(matched, name) {
				matched = append(matched, name)
			}
		}
		if assert.Lenf(t, matched, 1, "%s: %s %s reaches exactly one URN it had (URN %s, aliases %v)", stack, r.Type, r.Name, r.URN, r.Aliases) {
			reached = append(reached, matched[0])
		}
	}
	slices.Sort(reached)
	slices.Sort(wantReads)
	slices.Sort(gotReads)
	assert.Equalf(t, wantReached, reached, "%s: every URN it had is reached once", stack)
	assert.Equalf(t, wantReads, gotReads, "%s: it reads the objects it read", stack)
}
