package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RecordKubeProxy records in the ledger the rules kube-proxy (at binary)
// will make, which teardown removes.
func RecordKubeProxy(l *Ledger, binary string) error {
	if err := l.record(hostChangeKubeProxyRules, binary); err != nil {
		return err
	}
	// kube-proxy --cleanup flushes KUBE-FIREWALL but keeps the chain and its
	// jumps from INPUT and OUTPUT; they are ours when they were not there before.
	for _, bin := range []string{"iptables", "ip6tables"} {
		if exec.Command(bin, "-w", "-t", "filter", "-S", "KUBE-FIREWALL").Run() == nil {
			continue // another Kubernetes on this machine made it: not ours to remove
		}
		if err := l.record(iptablesChain(bin), "filter", "KUBE-FIREWALL"); err != nil {
			return err
		}
		for _, chain := range []string{"INPUT", "OUTPUT"} {
			if err := l.record(iptablesRule(bin), "filter", chain, "-j", "KUBE-FIREWALL"); err != nil {
				return err
			}
		}
	}
	return nil
}

// PrepareKubelet makes a real node's cgroup root and records, in the ledger,
// what the kubelet changes machine-wide, so teardown puts it back.
func PrepareKubelet(l *Ledger, cgroup string) error {
	// The kubelet wants its cgroup root to exist; it is this node's alone.
	if err := l.record(hostChangeCgroup, cgroup); err != nil {
		return err
	}
	for _, m := range CgroupMounts() {
		if strings.HasSuffix(m, "/unified") {
			continue // cgroup v1 hybrid: the unified hierarchy holds no controllers here
		}
		if err := os.MkdirAll(filepath.Join(m, cgroup), 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s in %s: %w", cgroup, m, err)
		}
		// A new cpuset cgroup has no CPUs or memory nodes until given its parent's.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(m, cgroup, f), b, 0o644); err != nil {
					return fmt.Errorf("setting %s of cgroup %s: %w", f, cgroup, err)
				}
			}
		}
	}
	// The kubelet sets these machine-wide at start; record the old values so
	// teardown puts them back.
	for name, value := range map[string]string{
		"vm/overcommit_memory": "1", "vm/panic_on_oom": "0", "kernel/panic": "10", "kernel/panic_on_oops": "1",
		"kernel/keys/root_maxkeys": "1000000", "kernel/keys/root_maxbytes": "25000000",
	} {
		cur, err := os.ReadFile("/proc/sys/" + name)
		if err == nil && strings.TrimSpace(string(cur)) != value {
			if err := l.record(hostChangeSysctl, name, strings.TrimSpace(string(cur))); err != nil {
				return err
			}
		}
	}
	return nil
}

// RecordContainerd records in the ledger what a real node's containerd leaves
// outside its directory: the shims' sockets under /run/containerd/s, whatever
// the config says (the bundles in the state dir name them, for teardown).
func RecordContainerd(l *Ledger, containerdDir, containerdSocket string) error {
	for _, d := range []string{"/run/containerd", "/run/containerd/s"} {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			if err := l.record(hostChangeDir, d); err != nil {
				return err
			}
		}
	}
	return l.record(hostChangeShimSockets, filepath.Join(containerdDir, "state"), containerdSocket)
}
