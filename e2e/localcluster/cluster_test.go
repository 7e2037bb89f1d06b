package localcluster

import (
	"path/filepath"
	"testing"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/pki"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// `localcluster down`: a handle attached to a state directory another
// invocation recorded stops exactly its recorded processes, by pid, and
// removes the record; it reads the admin kubeconfig without reaching a server.
func TestAttachedClusterStopsTheRecordedProcesses(t *testing.T) {
	dir := t.TempDir()
	p := pki.New(filepath.Join(dir, "pki"))
	if err := p.Generate(); err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteKubeconfig(p, "https://127.0.0.1:1", filepath.Join(dir, "kubeconfig"), "admin"); err != nil {
		t.Fatal(err)
	}
	started := process.NewSet(dir, false)
	proc, err := started.Start("etcd", "/bin/sleep", []string{"60"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { started.Stop(time.Second) })

	c, err := Attach(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.APIServerURL != "https://127.0.0.1:1" || c.Client == nil || len(c.kinds) != 0 {
		t.Errorf("attached: API server %q, client %v, node kinds %d", c.APIServerURL, c.Client, len(c.kinds))
	}
	if ok, dead := c.Running(); !ok {
		t.Fatalf("attached: %v not running", dead)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if proc.Alive() || process.RecordedIn(dir) {
		t.Errorf("after Stop: etcd alive %v, record left %v", proc.Alive(), process.RecordedIn(dir))
	}
}
