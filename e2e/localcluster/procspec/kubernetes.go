package procspec

// KubernetesSettings are the settings of Kubernetes' own processes.
type KubernetesSettings struct {
	Etcd              EtcdSettings
	APIServer         APIServerSettings
	ControllerManager ControllerManagerSettings
	Scheduler         SchedulerSettings
}

// Kubernetes are Kubernetes' own processes in start order, each ready
// (when it has a readiness) before the next starts: etcd, the API server on
// it, then its two controllers.
func Kubernetes(s KubernetesSettings) []Spec {
	return []Spec{
		Etcd(s.Etcd),
		APIServer(s.APIServer),
		ControllerManager(s.ControllerManager),
		Scheduler(s.Scheduler),
	}
}
