package procspec

import (
	"strconv"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
)

// ControllerManagerSettings are what kube-controller-manager's command line
// depends on.
type ControllerManagerSettings struct {
	Binary        string
	Kubeconfig    string
	Port          int
	PKI           *pki.PKI
	HPASyncPeriod time.Duration
}

// ControllerManager is kube-controller-manager with the controllers
// the product relies on (the HPA among them).
func ControllerManager(s ControllerManagerSettings) Spec {
	return Spec{
		Name: "kube-controller-manager", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.Port),
			"--leader-elect=false",
			"--service-account-private-key-file=" + s.PKI.Path(pki.SAKeyFile),
			"--root-ca-file=" + s.PKI.Path(pki.ClusterCA+".crt"),
			// Each controller acts as its own ServiceAccount with its built-in role
			// (system:controller:*), as on a real cluster.
			"--use-service-account-credentials=true",
			// What the product and Pulumi's await logic rely on: endpoints for
			// Services (Pulumi waits for them), the HPA, garbage collection, ...
			"--controllers=horizontal-pod-autoscaler-controller,garbage-collector-controller,namespace-controller," +
				"serviceaccount-controller,serviceaccount-token-controller,deployment-controller,replicaset-controller," +
				"job-controller,pod-garbage-collector-controller,node-lifecycle-controller," +
				"root-ca-certificate-publisher-controller,endpoints-controller,endpointslice-controller,disruption-controller",
			"--horizontal-pod-autoscaler-sync-period=" + s.HPASyncPeriod.String(),
			"--v=1",
		},
	}
}
