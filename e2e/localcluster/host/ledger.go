// Package host is what real nodes change on this machine outside the state
// directory, and how it is put back: the prerequisites they install
// (prereqs.go), the pod network of bridge, routes and rules (network.go), what
// their processes change (nodes.go), the ledger that records each change
// before it is made (ledger.go, change.go) and the one control plane that owns
// the fixed addresses (owner.go).
package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/process"
	"warmpool.local/warm-pool-autoscaling-keda/poll"
)

// The host ledger is the record of everything a real node changed on the
// machine outside its state directory's files: the bridge, routes, iptables
// rules and chains, sysctls, cgroups. Each entry is written before the change
// is made, so a control plane killed halfway still names what it may have
// left; teardown (Stop, `localcluster down`, or the next start with real
// nodes) undoes the entries in reverse order, each by its own name, and
// tolerates an entry whose change never happened.
const LedgerFile = "host-ledger.jsonl"

// hostEntry is one line of the ledger; hostChanges says what each kind's
// args are and how it is undone.
type hostEntry struct {
	Kind hostChangeKind `json:"kind"`
	Args []string       `json:"args"`
}

type Ledger struct {
	path string
}

// NewLedger is the ledger of the control plane in stateDir.
func NewLedger(stateDir string) *Ledger {
	return &Ledger{path: filepath.Join(stateDir, LedgerFile)}
}

func (l *Ledger) record(kind hostChangeKind, args ...string) error {
	b, err := json.Marshal(hostEntry{Kind: kind, Args: args})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

func readHostLedger(path string) ([]hostEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []hostEntry
	s := bufio.NewScanner(f)
	for s.Scan() {
		var e hostEntry
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			continue // a line cut by a kill: its change never started
		}
		out = append(out, e)
	}
	return out, s.Err()
}

// Clean undoes what the real nodes of the control plane in stateDir did
// to the machine: it kills what still runs from them (shims, sandboxes,
// container processes), unmounts everything mounted under stateDir, then
// undoes the ledger's entries in reverse. It is safe to run twice.
func Clean(stateDir string, kubeProxy string) error {
	ledgerPath := filepath.Join(stateDir, LedgerFile)
	entries, err := readHostLedger(ledgerPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	// Processes first: shims, runsc and container processes hold mounts,
	// network namespaces and cgroups.
	errs = append(errs, killStateProcesses(stateDir)...)
	for _, e := range entries {
		if c, ok := hostChanges[e.Kind]; ok && c.killFirst != nil {
			errs = append(errs, c.killFirst(e.Args)...)
		}
	}
	errs = append(errs, unmountUnder(stateDir)...)
	for i := len(entries) - 1; i >= 0; i-- {
		if err := undo(entries[i], kubeProxy); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		_ = os.Remove(ledgerPath)
	}
	return errors.Join(errs...)
}

func undo(e hostEntry, kubeProxy string) error {
	c, ok := hostChanges[e.Kind]
	if !ok {
		return fmt.Errorf("unknown host ledger entry %q", e.Kind)
	}
	return c.undo(e.Args, kubeProxy)
}

// killStateProcesses kills every process whose command line names stateDir
// (containerd's shims name its socket, runsc its root), which are the
// processes the recorded pids do not cover.
func killStateProcesses(stateDir string) []error {
	return removeUntilGone(5*time.Second, 100*time.Millisecond, func() []int { return ProcessesNaming(stateDir) },
		func(pid int) error {
			_ = syscall.Kill(pid, syscall.SIGKILL) // gone already (ESRCH) is what we want
			return nil
		},
		func(pids []int) error {
			return fmt.Errorf("processes %v (their command lines name %s) survived SIGKILL", pids, stateDir)
		})
}

// NodePrograms are the programs a real node runs (runsc re-executes itself as
// the sandbox and the gofer).
var NodePrograms = map[string]bool{
	"containerd": true, "containerd-shim-runc-v2": true, "containerd-shim-runsc-v1": true,
	"runsc": true, "runsc-gofer": true, "runsc-sandbox": true, "runc": true, "kubelet": true, "kube-proxy": true,
}

// ProcessesNaming are the pids of the real nodes' programs whose command
// lines name stateDir.
func ProcessesNaming(stateDir string) []int {
	var pids []int
	self := os.Getpid()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(d.Name(), "%d", &pid); err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), stateDir+"/") {
			continue
		}
		// Only the node's own programs: never, say, a shell tailing a log there.
		argv0, _, _ := strings.Cut(string(b), "\x00")
		exe, _ := os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if !NodePrograms[filepath.Base(argv0)] && !NodePrograms[filepath.Base(exe)] {
			continue
		}
		if _, err := process.StartTime(pid); err != nil {
			continue // a zombie: nothing left to kill
		}
		pids = append(pids, pid)
	}
	return pids
}

// CgroupMounts are the cgroup hierarchies (v1 controllers, v2's unified).
func CgroupMounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				out = append(out, unescapeMount(fields[4]))
			}
		}
	}
	return out
}

// cgroupDirs lists name (a top-level cgroup) and its descendants in every
// hierarchy, deepest first.
func cgroupDirs(name string) []string {
	var dirs []string
	for _, m := range CgroupMounts() {
		root := filepath.Join(m, name)
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// killCgroup kills every process in the cgroup subtree (the pods' containers).
// It kills what it finds, every 100 ms for up to 5 s, until it finds nothing.
func killCgroup(name string) []error {
	err := poll.Until(context.Background(), 5*time.Second, 100*time.Millisecond, func(context.Context) (bool, error) {
		any := false
		for _, d := range cgroupDirs(name) {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				var pid int
				if _, err := fmt.Sscanf(f, "%d", &pid); err == nil {
					any = true
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		return !any, nil
	})
	if err != nil {
		return []error{fmt.Errorf("processes in cgroup %s survived SIGKILL", name)}
	}
	return nil
}

// removeCgroup removes the cgroup's directories, deepest first; one still busy (its last
// process not yet reaped) is tried again every 100 ms for up to 2 s.
func removeCgroup(name string) error {
	var errs []error
	for _, d := range cgroupDirs(name) {
		err := poll.Until(context.Background(), 2*time.Second, 100*time.Millisecond, func(context.Context) (bool, error) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				return false, err
			}
			return true, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// unmountUnder unmounts every mount point under dir, deepest first (pod
// volumes, container root file systems, network namespaces, the kubelet's
// shared bind mount of its root).
func unmountUnder(dir string) []error {
	return removeUntilGone(2*time.Second, 10*time.Millisecond, func() []string { return MountsUnder(dir) },
		func(p string) error {
			// EINVAL: no longer a mount point; ENOENT: gone with its parent.
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				return fmt.Errorf("unmounting %s: %w", p, err)
			}
			return nil
		},
		func(points []string) error { return fmt.Errorf("still mounted under %s: %v", dir, points) })
}

// removeUntilGone lists what is left and removes each, round after round (removing one
// can uncover or free another: a mount under a mount, a shim's child), every interval
// until nothing is left or within has passed (poll.Until). It returns the last round's
// errors and, when something is still there, one error naming it.
func removeUntilGone[T any](within, interval time.Duration, left func() []T, remove func(T) error, stillThere func([]T) error) []error {
	var errs []error
	err := poll.Until(context.Background(), within, interval, func(context.Context) (bool, error) {
		items := left()
		if len(items) == 0 {
			return true, nil
		}
		errs = nil
		for _, it := range items {
			if err := remove(it); err != nil {
				errs = append(errs, err)
			}
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	if items := left(); len(items) > 0 {
		return append(errs, stillThere(items))
	}
	return nil
}

// MountsUnder are the mount points under dir.
func MountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// removeShimSockets removes the sockets containerd's shims made under
// /run/containerd/s: each shim writes its address into its bundle, inside
// the state dir, which is how they are known to be this control plane's.
//
// A shim's socket is /run/containerd/s/<sha256 of "<containerd socket>/<namespace>/<pod sandbox id>">
// (containerd's shim.CreateSocketAddress), so it is also known by the task
// directories alone, when a killed shim wrote no address.
func removeShimSockets(containerdState string, containerdSocket ...string) error {
	var socks []string
	files, _ := filepath.Glob(filepath.Join(containerdState, "io.containerd.runtime.v2.task", "*", "*", "address"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			socks = append(socks, strings.TrimPrefix(strings.TrimSpace(string(b)), "unix://"))
		}
	}
	if len(containerdSocket) > 0 {
		tasks, _ := filepath.Glob(filepath.Join(containerdState, "io.containerd.runtime.v2.task", "*", "*"))
		for _, t := range tasks {
			ns, id := filepath.Base(filepath.Dir(t)), filepath.Base(t)
			for _, p := range []string{filepath.Join(containerdSocket[0], ns, id), filepath.Join(containerdSocket[0], ns, id, "debug")} {
				socks = append(socks, fmt.Sprintf("/run/containerd/s/%x", sha256.Sum256([]byte(p))))
			}
		}
	}
	var errs []error
	for _, sock := range socks {
		if !strings.HasPrefix(sock, "/run/containerd/s/") {
			continue
		}
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// iptablesTables are the tables iptables-nft makes on first use, per family.
var iptablesTables = []string{"filter", "nat", "mangle", "raw", "security"}

// nftTables lists "family name" of every nftables table.
func nftTables() ([]string, error) {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list tables: %w", err)
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "table" {
			tables = append(tables, f[1]+" "+f[2])
		}
	}
	return tables, nil
}

// removeNewEmptyTables deletes the iptables tables that came into being while
// the real nodes ran (iptables-nft creates a table on first use, kube-proxy's
// cleanup empties but keeps them), when nothing is left in them.
func removeNewEmptyTables(before []string) error {
	had := map[string]bool{}
	for _, t := range before {
		had[t] = true
	}
	now, err := nftTables()
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range now {
		fam, name, _ := strings.Cut(t, " ")
		if had[t] || (fam != "ip" && fam != "ip6") || !slices.Contains(iptablesTables, name) {
			continue
		}
		save := "iptables-save"
		if fam == "ip6" {
			save = "ip6tables-save"
		}
		out, err := exec.Command(save, "-t", name).Output()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		empty := true
		for _, line := range strings.Split(string(out), "\n") {
			// A rule, or a chain that is not one of the table's base chains.
			if strings.HasPrefix(line, "-A ") || (strings.HasPrefix(line, ":") && !strings.Contains(line, " ACCEPT ")) {
				empty = false
			}
		}
		if !empty {
			errs = append(errs, fmt.Errorf("table %s appeared while the real nodes ran and still holds rules: left as it is", t))
			continue
		}
		if err := run("nft", "delete", "table", fam, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
