package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The RuntimeClass handlers a real node's containerd serves: runc for
// ordinary pods (the default), gVisor's runsc for isolated-sandbox.
const (
	runcHandler  = "runc"
	runscHandler = "runsc"
	// runcLoopbackHandler is runc with only loopback (LoopbackOnlyRuntimeClass).
	runcLoopbackHandler = "runc-loopback-only"
	// pauseImage is the sandbox ("pause") image, built locally (images.go).
	pauseImage = "localcluster.local/pause:1"
)

// containerdConfig is containerd 2.x's configuration for node n: its own
// root, state and sockets under the node's directory, so it never touches a
// system containerd, and nothing of it listens beyond loopback.
func (c *Cluster) containerdConfig(n *realNode, cniConfDir string) string {
	cd := n.containerdDir()
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
# NRI would open a socket under /var/run/nri.
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[debug]
  address = ""
[metrics]
  address = ""

[plugins.'io.containerd.internal.v1.opt']
  path = %[5]q

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %[6]q

[plugins.'io.containerd.cri.v1.runtime']
  # root lacks CAP_SYS_RESOURCE here: no oom_score_adj below the current one.
  restrict_oom_score_adj = true
  # Network namespaces under the state dir, not /run/netns (shared with the machine).
  netns_mounts_under_state_dir = true
  cdi_spec_dirs = []
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%[7]q, %[15]q]
    conf_dir = %[8]q
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = %[9]q
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[9]s]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = %[10]q
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[9]s.options]
        BinaryName = "/usr/sbin/runc"
        Root = %[11]q
        SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[12]s]
      runtime_type = "io.containerd.runsc.v1"
      runtime_path = %[13]q
      # Never on the bridge: an address for the CRI's sake, no interface.
      cni_conf_dir = %[16]q
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[12]s.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = %[14]q
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[17]s]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = %[10]q
      cni_conf_dir = %[16]q
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.%[17]s.options]
        BinaryName = "/usr/sbin/runc"
        Root = %[11]q
        SystemdCgroup = false
`, filepath.Join(cd, "root"), filepath.Join(cd, "state"), n.containerdSocket(), n.containerdSocket()+".ttrpc",
		filepath.Join(cd, "opt"), pauseImage, cniBinDir, cniConfDir,
		runcHandler, c.Binaries.Path("containerd-shim-runc-v2"), filepath.Join(cd, "runc"),
		runscHandler, c.Binaries.Path("containerd-shim-runsc-v1"), filepath.Join(cd, "runsc.toml"),
		c.nodeProgramDir, loopbackOnlyConfDir(n.dir), runcLoopbackHandler)
}

// runscConfig is the gVisor shim's: no network at all (only loopback inside
// the sandbox, whatever CNI did outside it) and the systrap platform (this
// machine's /dev/kvm runs no stock guest; KVM panics).
func runscConfig(n *realNode, runsc string) string {
	return fmt.Sprintf(`binary_name = %q
root = %q

[runsc_config]
  network = "none"
  platform = "systrap"
`, runsc, filepath.Join(n.containerdDir(), "runsc-root"))
}

func (c *Cluster) startContainerd(ctx context.Context, l *hostLedger, n *realNode) error {
	cniConfDir, err := writeCNIConfig(n.dir, n.index)
	if err != nil {
		return err
	}
	cd := n.containerdDir()
	if err := os.MkdirAll(cd, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cd, "runsc.toml"), []byte(runscConfig(n, c.Binaries.Path("runsc"))), 0o644); err != nil {
		return err
	}
	cfg := filepath.Join(cd, "config.toml")
	if err := os.WriteFile(cfg, []byte(c.containerdConfig(n, cniConfDir)), 0o644); err != nil {
		return err
	}
	// Shims put their sockets under /run/containerd/s whatever the config
	// says; the bundles in the state dir name them, for teardown.
	for _, d := range []string{"/run/containerd", "/run/containerd/s"} {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			if err := l.record("dir", d); err != nil {
				return err
			}
		}
	}
	if err := l.record("shim-sockets", filepath.Join(cd, "state"), n.containerdSocket()); err != nil {
		return err
	}
	proc, err := c.startProcess(n.name+"-containerd", c.Binaries.Path("containerd"), []string{"--config=" + cfg, "--log-level=warn"})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if conn, err := net.Dial("unix", n.containerdSocket()); err == nil {
			conn.Close()
			return nil
		}
		if proc.exited() {
			return c.exitedError(n.name + "-containerd")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd of %s did not open %s within 60s", n.name, n.containerdSocket())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
