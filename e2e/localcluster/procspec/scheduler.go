package procspec

import "strconv"

// SchedulerSettings are what kube-scheduler's command line depends on.
type SchedulerSettings struct {
	Binary     string
	Kubeconfig string
	Port       int
}

// Scheduler is kube-scheduler, which binds pods to the nodes.
func Scheduler(s SchedulerSettings) Spec {
	return Spec{
		Name: "kube-scheduler", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.Port),
			"--leader-elect=false", "--v=1",
		},
	}
}
