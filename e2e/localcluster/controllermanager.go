package localcluster

import (
	"strconv"
	"time"
)

// controllerManagerSettings are what kube-controller-manager's command line
// depends on.
type controllerManagerSettings struct {
	Binary        string
	Kubeconfig    string
	Port          int
	PKI           *pki
	HPASyncPeriod time.Duration
}

// controllerManagerSpec is kube-controller-manager with the controllers
// the product relies on (the HPA among them).
func controllerManagerSpec(s controllerManagerSettings) processSpec {
	return processSpec{
		name: "kube-controller-manager", binary: s.Binary,
		args: []string{
			"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig, "--authorization-kubeconfig=" + s.Kubeconfig,
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.Port),
			"--leader-elect=false",
			"--service-account-private-key-file=" + s.PKI.path(saKeyFile),
			"--root-ca-file=" + s.PKI.path(clusterCA+".crt"),
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
