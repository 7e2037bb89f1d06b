package procspec

import "strconv"

// SchedulerSettings are what kube-scheduler's command line depends on.
type SchedulerSettings struct {
	Binary     string
	Kubeconfig string
	Port       int
	// LogLevel is its --v; 0 is 1, its errors and bindings. At 5 its log has each pod's
	// every scheduling attempt and every move between its queues, with the event that moved it.
	LogLevel int
}

// Scheduler is kube-scheduler, which binds pods to the nodes.
func Scheduler(s SchedulerSettings) Spec {
	return Spec{
		Name: "kube-scheduler", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.Port),
			"--leader-elect=false", "--v=" + strconv.Itoa(max(s.LogLevel, 1)),
		},
	}
}
