package localcluster

import "strconv"

// schedulerSettings are what kube-scheduler's command line depends on.
type schedulerSettings struct {
	Binary     string
	Kubeconfig string
	Port       int
}

// schedulerSpec is kube-scheduler, which binds pods to the nodes.
func schedulerSpec(s schedulerSettings) processSpec {
	return processSpec{
		name: "kube-scheduler", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.Port),
			"--leader-elect=false", "--v=1",
		},
	}
}
