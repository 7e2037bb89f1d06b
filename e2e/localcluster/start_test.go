package localcluster

import (
	"slices"
	"testing"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/addons"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/plane"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/procspec"
)

// The names the fault tests Kill and Restart (e2e/faults_test.go) are the
// names of processes a cluster with a real node starts: the process record
// knows them by these.
func TestFaultTestsNamesAreProcessSpecs(t *testing.T) {
	pl := &plane.Plane{RealNodes: 1, Without: map[string]bool{}, PKI: pki.New("/state/pki")}
	var names []string
	for _, g := range procspec.Kubernetes(kubernetesSettings(pl)) {
		names = append(names, g.Name)
	}
	for _, a := range addons.List(pl, nil) {
		for _, g := range a.Processes {
			names = append(names, g.Name)
		}
	}
	n := &procspec.RealNode{Name: RealNodeName(0), Dir: "/state/" + RealNodeName(0)}
	names = append(names, procspec.Kubelet(procspec.KubeletSettings{Node: n, PKI: pl.PKI}).Name,
		procspec.Containerd(procspec.ContainerdSettings{Node: n}).Name, procspec.KubeProxy(procspec.KubeProxySettings{}).Name)
	for _, want := range []string{"keda-operator", "keda-adapter", "kube-controller-manager", "agent-sandbox-controller",
		RealNodeName(0) + "-kubelet", "kube-apiserver", "etcd", "coredns", RealNodeName(0) + "-containerd", "kube-proxy"} {
		if !slices.Contains(names, want) {
			t.Errorf("no process named %q (processes: %v)", want, names)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("two processes share a name (Kill and Restart take the first): %v", names)
	}
}

// Start's steps in the order each relies on the one before: the host's
// network before the API server (which listens on it with real nodes),
// Kubernetes before the objects and CRDs applied to it, those before the
// add-ons that read them, the add-ons (CRDs' controllers, the cluster DNS)
// before the nodes whose pods use them, and the readiness last.
func TestStartStepsRunInTheOrderTheyRelyOn(t *testing.T) {
	pl := &plane.Plane{RealNodes: 1, Without: map[string]bool{}, PKI: pki.New("/state/pki")}
	var got []string
	for _, s := range (&Cluster{}).startSteps(pl, nil) {
		got = append(got, s.what)
	}
	want := []string{
		"the host for the nodes",
		"etcd, kube-apiserver, kube-controller-manager, kube-scheduler",
		"the nodes' objects, runtime classes, CRDs and KEDA's APIService",
		"the add-ons (agent-sandbox-controller, cluster DNS, keda)",
		"the nodes (KWOK, kubelets)",
		"the whole chain to be ready",
	}
	if !slices.Equal(got, want) {
		t.Errorf("start steps:\n%q\nwant\n%q", got, want)
	}
}
