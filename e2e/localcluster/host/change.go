package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// hostChangeKind names a kind of change the real nodes make to the machine,
// as the host ledger records it. The strings are what ledger files on disk
// hold, also those of a control plane still running: never change one.
type hostChangeKind string

const (
	hostChangeLink            hostChangeKind = "link"
	hostChangeRoute           hostChangeKind = "route"
	hostChangeIPTablesRule    hostChangeKind = "iptables-rule"
	hostChangeIP6TablesRule   hostChangeKind = "ip6tables-rule"
	hostChangeIPTablesChain   hostChangeKind = "iptables-chain"
	hostChangeIP6TablesChain  hostChangeKind = "ip6tables-chain"
	hostChangeKubeProxyRules  hostChangeKind = "kube-proxy-rules"
	hostChangeSysctl          hostChangeKind = "sysctl"
	hostChangeCgroup          hostChangeKind = "cgroup"
	hostChangeDir             hostChangeKind = "dir"
	hostChangeShimSockets     hostChangeKind = "shim-sockets"
	hostChangeNFTTablesBefore hostChangeKind = "nft-tables-before"
)

// hostChange is what the ledger knows of one kind of change. Its undo
// tolerates an entry whose change never happened (the entry is written
// first) and one already undone (teardown may run twice).
type hostChange struct {
	what string // the entry's args
	// killFirst, when set, kills what still runs in the change; Clean
	// calls it for every entry before unmounting, since those processes
	// hold the mounts.
	killFirst func(args []string) []error
	undo      func(args []string, kubeProxy string) error
}

// hostChanges is every kind the ledger can hold; an entry of a kind not here
// (a newer version's ledger) cannot be undone.
var hostChanges = map[hostChangeKind]hostChange{
	hostChangeLink: {
		what: "interface",
		undo: func(a []string, _ string) error {
			if _, err := os.Stat("/sys/class/net/" + a[0]); err != nil {
				return nil
			}
			return run("ip", "link", "del", a[0])
		},
	},
	hostChangeRoute: {
		what: "route, as `ip route del` takes it",
		undo: func(a []string, _ string) error {
			out, err := exec.Command("ip", append([]string{"route", "del"}, a...)...).CombinedOutput()
			if err != nil && !strings.Contains(string(out), "No such process") && !strings.Contains(string(out), "Cannot find device") {
				return fmt.Errorf("ip route del %s: %w: %s", strings.Join(a, " "), err, strings.TrimSpace(string(out)))
			}
			return nil
		},
	},
	hostChangeIPTablesRule:   ipTablesChange("table chain rule...", deleteIPTablesRule, "iptables"),
	hostChangeIP6TablesRule:  ipTablesChange("table chain rule...", deleteIPTablesRule, "ip6tables"),
	hostChangeIPTablesChain:  ipTablesChange("table chain", deleteIPTablesChain, "iptables"),
	hostChangeIP6TablesChain: ipTablesChange("table chain", deleteIPTablesChain, "ip6tables"),
	hostChangeKubeProxyRules: {
		what: "the kube-proxy binary that makes them",
		undo: undoKubeProxyRules,
	},
	hostChangeSysctl: {
		what: "name (under /proc/sys) previous-value",
		undo: func(a []string, _ string) error {
			cur, err := os.ReadFile("/proc/sys/" + a[0])
			if err != nil || strings.TrimSpace(string(cur)) == a[1] {
				return nil
			}
			return os.WriteFile("/proc/sys/"+a[0], []byte(a[1]), 0o644)
		},
	},
	hostChangeCgroup: {
		what:      "top-level cgroup, in every hierarchy",
		killFirst: func(a []string) []error { return killCgroup(a[0]) },
		undo:      func(a []string, _ string) error { return removeCgroup(a[0]) },
	},
	hostChangeDir: {
		what: "directory outside the state dir, made by this control plane",
		undo: func(a []string, _ string) error {
			// Left when something else put files in it since.
			if err := os.Remove(a[0]); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) {
				return err
			}
			return nil
		},
	},
	hostChangeShimSockets: {
		// The shims' sockets live outside containerd's state dir.
		what: "containerd's state dir, its socket",
		undo: func(a []string, _ string) error { return removeShimSockets(a[0], a[1:]...) },
	},
	hostChangeNFTTablesBefore: {
		// The iptables-nft tables that appear after this entry are ours.
		what: `"family name" of every nftables table before the real nodes`,
		undo: func(a []string, _ string) error { return removeNewEmptyTables(a) },
	},
}

// ipTablesChange is a rule or chain kind, undone by the same command for IPv4
// (iptables) and IPv6 (ip6tables).
func ipTablesChange(what string, del func(command string, args []string) error, command string) hostChange {
	return hostChange{what: what, undo: func(a []string, _ string) error { return del(command, a) }}
}

// iptablesRule is the kind of a rule added with bin (iptables or ip6tables).
func iptablesRule(bin string) hostChangeKind {
	switch bin {
	case "iptables":
		return hostChangeIPTablesRule
	case "ip6tables":
		return hostChangeIP6TablesRule
	}
	panic("no host ledger kind for rules of " + bin)
}

// iptablesChain is the kind of a chain made with bin (iptables or ip6tables).
func iptablesChain(bin string) hostChangeKind {
	switch bin {
	case "iptables":
		return hostChangeIPTablesChain
	case "ip6tables":
		return hostChangeIP6TablesChain
	}
	panic("no host ledger kind for chains of " + bin)
}

// deleteIPTablesRule deletes the rule "table chain rule..." when it is there.
func deleteIPTablesRule(bin string, a []string) error {
	if exec.Command(bin, append([]string{"-w", "-t", a[0], "-C", a[1]}, a[2:]...)...).Run() != nil {
		return nil
	}
	return run(bin, append([]string{"-w", "-t", a[0], "-D", a[1]}, a[2:]...)...)
}

// deleteIPTablesChain flushes and deletes the chain "table chain" when it is there.
func deleteIPTablesChain(bin string, a []string) error {
	if exec.Command(bin, "-w", "-t", a[0], "-S", a[1]).Run() != nil {
		return nil
	}
	if err := run(bin, "-w", "-t", a[0], "-F", a[1]); err != nil {
		return err
	}
	return run(bin, "-w", "-t", a[0], "-X", a[1])
}

// undoKubeProxyRules runs kube-proxy's own cleanup, which removes every
// KUBE-* chain and jump it made; with kubeProxy, the caller's binary, else
// the one recorded.
func undoKubeProxyRules(a []string, kubeProxy string) error {
	if kubeProxy == "" {
		kubeProxy = a[0]
	}
	if _, err := os.Stat(kubeProxy); err != nil {
		return fmt.Errorf("kube-proxy's iptables rules may be left: %s is gone (run kube-proxy --cleanup)", kubeProxy)
	}
	out, err := exec.Command(kubeProxy, "--cleanup", "--proxy-mode=iptables", "--v=0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kube-proxy --cleanup: %w: %s", err, process.Tail(string(out), 1000))
	}
	return nil
}
