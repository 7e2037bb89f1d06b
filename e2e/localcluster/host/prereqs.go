package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
)

// A nodePrereq is a program a real node needs from the machine (Debian
// packages: they are not Go modules), and the package that provides it.
type nodePrereq struct {
	path    string
	pkg     string
	purpose string
}

// CNIBinDir is where Debian's containernetworking-plugins installs them.
const CNIBinDir = "/usr/lib/cni"

var nodePrereqs = []nodePrereq{
	{"/usr/sbin/runc", "runc", "the OCI runtime of ordinary pods"},
	{CNIBinDir + "/bridge", "containernetworking-plugins", "the pod network's bridge plugin"},
	{CNIBinDir + "/host-local", "containernetworking-plugins", "pod address allocation"},
	{CNIBinDir + "/loopback", "containernetworking-plugins", "each pod's loopback interface"},
	{"/usr/sbin/iptables", "iptables", "the network-safety rules and kube-proxy"},
	{"/usr/sbin/nft", "nftables", "removing the iptables tables that first use created"},
	{"/usr/sbin/ip", "iproute2", "the bridge, its address and routes"},
	{"/usr/bin/busybox", "busybox-static", "the shell and tools of the sandbox template's image"},
}

// NodePrereqPackages are the Debian packages EnsureNodePrereqs installs.
func NodePrereqPackages() []string {
	var pkgs []string
	seen := map[string]bool{}
	for _, p := range nodePrereqs {
		if !seen[p.pkg] {
			seen[p.pkg] = true
			pkgs = append(pkgs, p.pkg)
		}
	}
	return pkgs
}

// missingPrereqs lists what a real node needs and the machine lacks.
func missingPrereqs() []nodePrereq {
	var missing []nodePrereq
	for _, p := range nodePrereqs {
		if _, err := os.Stat(p.path); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// EnsureNodePrereqs installs, with apt-get, the Debian packages a real node
// needs and the machine lacks (nothing when all are there). It needs root; on
// a machine without apt-get or root it fails saying what to install.
func EnsureNodePrereqs(ctx context.Context, progress io.Writer) error {
	missing := missingPrereqs()
	if len(missing) == 0 {
		return nil
	}
	var pkgs, what []string
	seen := map[string]bool{}
	for _, m := range missing {
		what = append(what, fmt.Sprintf("%s (%s, package %s)", m.path, m.purpose, m.pkg))
		if !seen[m.pkg] {
			seen[m.pkg] = true
			pkgs = append(pkgs, m.pkg)
		}
	}
	howTo := "apt-get update && apt-get install -y " + strings.Join(pkgs, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("real nodes need %s; install them as root: %s", strings.Join(what, ", "), howTo)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("real nodes need %s, and this machine has no apt-get to install Debian's packages %s", strings.Join(what, ", "), strings.Join(pkgs, " "))
	}
	fmt.Fprintf(progress, "localcluster: installing %s (real nodes need them)\n", strings.Join(pkgs, " "))
	for _, args := range [][]string{{"update", "-q"}, append([]string{"install", "-y", "-q", "--no-install-recommends"}, pkgs...)} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s\n(install them by hand: %s)", strings.Join(args, " "), err, process.Tail(string(out), 2000), howTo)
		}
	}
	if still := missingPrereqs(); len(still) > 0 {
		return errors.New("apt-get installed " + strings.Join(pkgs, " ") + " but " + still[0].path + " is still missing")
	}
	return nil
}

// RealNodesPossible says whether this machine can run real nodes (Linux,
// root, and the Debian packages present or installable with apt-get), and
// if not, why in one line.
func RealNodesPossible() (bool, string) {
	if runtime.GOOS != "linux" {
		return false, "real nodes need Linux (this is " + runtime.GOOS + ")"
	}
	if os.Geteuid() != 0 {
		return false, "real nodes need root (containerd, the kubelet, a bridge and iptables rules)"
	}
	if len(missingPrereqs()) > 0 {
		if _, err := exec.LookPath("apt-get"); err != nil {
			return false, "real nodes need Debian's " + strings.Join(NodePrereqPackages(), " ") + " and this machine has no apt-get"
		}
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return false, "real nodes need util-linux's unshare (KEDA's own view of the cluster DNS)"
	}
	return true, ""
}
