package localcluster

import (
	"path/filepath"
	"strconv"
)

// startControllerManager starts kube-controller-manager with the controllers
// the product relies on (the HPA among them).
func (c *Cluster) startControllerManager(p *pki) error {
	kcm := filepath.Join(c.StateDir, "controller-manager.kubeconfig")
	_, err := c.procs.Start("kube-controller-manager", c.Binaries.Path("kube-controller-manager"), []string{
		"--kubeconfig=" + kcm, "--authentication-kubeconfig=" + kcm, "--authorization-kubeconfig=" + kcm,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.ports.controllerManager),
		"--leader-elect=false",
		"--service-account-private-key-file=" + p.path(saKeyFile),
		"--root-ca-file=" + p.path(clusterCA+".crt"),
		// Each controller acts as its own ServiceAccount with its built-in role
		// (system:controller:*), as on a real cluster.
		"--use-service-account-credentials=true",
		// What the product and Pulumi's await logic rely on: endpoints for
		// Services (Pulumi waits for them), the HPA, garbage collection, ...
		"--controllers=horizontal-pod-autoscaler-controller,garbage-collector-controller,namespace-controller," +
			"serviceaccount-controller,serviceaccount-token-controller,deployment-controller,replicaset-controller," +
			"job-controller,pod-garbage-collector-controller,node-lifecycle-controller," +
			"root-ca-certificate-publisher-controller,endpoints-controller,endpointslice-controller,disruption-controller",
		"--horizontal-pod-autoscaler-sync-period=" + c.HPASyncPeriod.String(),
		"--v=1",
	})
	return err
}
