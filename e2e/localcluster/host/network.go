package host

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Addresses. Everything comes from 198.18.0.0/15 (RFC 2544's benchmarking
// range): never a private range, never the machine's own network, and an
// unreachable route on the host keeps any of it from following the default
// route off the machine.
const (
	safeRange = "198.18.0.0/15"
	// nodeBridge joins the real nodes' ordinary pods; the host is
	// PodAddress on it: the pods' gateway, the nodes' address, and the
	// API server's address for pods (behind the kubernetes Service).
	nodeBridge    = "lcbr0"
	PodAddress    = "198.18.0.1"
	realPodSubnet = "198.18.0.0/17"   // the bridge's subnet: real nodes' pods
	KWOKPodCIDR   = "198.18.128.0/17" // simulated nodes' pod addresses
	ClusterCIDR   = "198.18.0.0/16"   // every pod address
	ServiceCIDR   = "198.19.0.0/16"
	// KubernetesServiceIP is the first address of ServiceCIDR, which the API
	// server gives the kubernetes Service.
	KubernetesServiceIP = "198.19.0.1"
	// MaxKWOKNodes: simulated node i gets 198.18.(128+i).0/24.
	MaxKWOKNodes = 128
	// MaxRealNodes: real node i hands out 198.18.(i+1).0/24 on the bridge.
	MaxRealNodes = 8
)

// Chains of the network-safety rules (iptables, the same backend kube-proxy uses).
const (
	ForwardChain = "LOCALCLUSTER-FORWARD" // filter FORWARD: what pods may reach
	egressChain  = "LOCALCLUSTER-EGRESS"  // mangle POSTROUTING: nothing of the range leaves
)

// KWOKPodCIDROf is simulated node i's pod range.
func KWOKPodCIDROf(i int) string { return fmt.Sprintf("198.18.%d.0/24", 128+i) }

// realPodRangeOf is the part of the bridge's subnet node i's pods get.
func realPodRangeOf(i int) (start, end, cidr string) {
	return fmt.Sprintf("198.18.%d.2", i+1), fmt.Sprintf("198.18.%d.254", i+1), fmt.Sprintf("198.18.%d.0/24", i+1)
}

// SetupNetwork makes the bridge, the unreachable route and the
// network-safety rules, recording each in the ledger before making it.
func SetupNetwork(l *Ledger) error {
	if _, err := os.Stat("/sys/class/net/" + nodeBridge); err == nil {
		return fmt.Errorf("interface %s already exists: another local control plane with real nodes is running, or one left it behind "+
			"(`localcluster down --state <its state dir>` removes it; `ip link del %s` if nothing runs)", nodeBridge, nodeBridge)
	}
	if err := checkRangeFree(); err != nil {
		return err
	}
	tables, err := nftTables()
	if err != nil {
		return fmt.Errorf("real nodes use iptables with the nf_tables backend: %w", err)
	}
	if err := l.record(hostChangeNFTTablesBefore, tables...); err != nil {
		return err
	}
	steps := []struct {
		kind   hostChangeKind // none for what goes with the link
		record []string
		cmd    []string
	}{
		{hostChangeLink, []string{nodeBridge}, []string{"ip", "link", "add", nodeBridge, "type", "bridge"}},
		{"", nil, []string{"ip", "addr", "add", PodAddress + "/17", "dev", nodeBridge}},
		{"", nil, []string{"ip", "link", "set", nodeBridge, "up"}},
		// The bridge's own /17 route is more specific; everything else of the
		// range is unreachable instead of going to the default gateway.
		{hostChangeRoute, []string{"unreachable", safeRange}, []string{"ip", "route", "add", "unreachable", safeRange}},
		// Service addresses go to the bridge, so a host process's connect()
		// finds a route; kube-proxy's DNAT then picks the pod.
		{hostChangeRoute, []string{ServiceCIDR, "dev", nodeBridge}, []string{"ip", "route", "add", ServiceCIDR, "dev", nodeBridge, "src", PodAddress}},
		{hostChangeIPTablesChain, []string{"filter", ForwardChain}, []string{"iptables", "-w", "-t", "filter", "-N", ForwardChain}},
		{hostChangeIPTablesChain, []string{"mangle", egressChain}, []string{"iptables", "-w", "-t", "mangle", "-N", egressChain}},
	}
	for _, s := range steps {
		if s.kind != "" {
			if err := l.record(s.kind, s.record...); err != nil {
				return err
			}
		}
		if err := run(s.cmd[0], s.cmd[1:]...); err != nil {
			return err
		}
	}
	// Forwarding is switched on for the bridge alone (the machine's global
	// ip_forward stays as it is): pods reach Services through the host.
	if err := os.WriteFile("/proc/sys/net/ipv4/conf/"+nodeBridge+"/forwarding", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("enabling forwarding on %s: %w", nodeBridge, err)
	}
	// Bridged pod-to-pod traffic must pass iptables for Service NAT to work.
	if err := setSysctl(l, "net/bridge/bridge-nf-call-iptables", "1"); err != nil {
		return err
	}
	rules := [][]string{
		// Pods may reach pod and Service addresses (after kube-proxy's DNAT, a
		// Service is its endpoints' pod addresses) and, through INPUT, the host.
		{"filter", ForwardChain, "-i", nodeBridge, "-d", safeRange, "-j", "RETURN"},
		{"filter", ForwardChain, "-i", nodeBridge, "-m", "comment", "--comment", "localcluster: pods reach no address outside " + safeRange,
			"-j", "REJECT", "--reject-with", "icmp-admin-prohibited"},
		{"filter", ForwardChain, "-o", nodeBridge, "-m", "comment", "--comment", "localcluster: nothing from outside is forwarded to pods", "-j", "DROP"},
		// Whatever the filter chains let through (kube-proxy accepts its own
		// marked packets before this chain), no packet of the range leaves
		// the machine: only loopback and the bridge carry it.
		{"mangle", egressChain, "-o", "lo", "-j", "RETURN"},
		{"mangle", egressChain, "-o", nodeBridge, "-j", "RETURN"},
		{"mangle", egressChain, "-s", safeRange, "-m", "comment", "--comment", "localcluster: the range never leaves the machine", "-j", "DROP"},
		{"mangle", egressChain, "-d", safeRange, "-m", "comment", "--comment", "localcluster: the range never leaves the machine", "-j", "DROP"},
	}
	for _, r := range rules {
		if err := run("iptables", append([]string{"-w", "-t", r[0], "-A", r[1]}, r[2:]...)...); err != nil {
			return err
		}
	}
	jumps := [][]string{
		{"filter", "FORWARD", "-j", ForwardChain},
		{"mangle", "POSTROUTING", "-j", egressChain},
	}
	for _, j := range jumps {
		if err := l.record(hostChangeIPTablesRule, j...); err != nil {
			return err
		}
		if err := run("iptables", append([]string{"-w", "-t", j[0], "-I", j[1], "1"}, j[2:]...)...); err != nil {
			return err
		}
	}
	return nil
}

// checkRangeFree refuses to start when an interface of the machine already
// has an address in the range (something else uses it).
func checkRangeFree() error {
	_, safe, _ := net.ParseCIDR(safeRange)
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, ifc := range ifaces {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && safe.Contains(ipn.IP) {
				return fmt.Errorf("interface %s already has %s, inside %s which the real nodes' pods and Services use: remove it or stop what uses it", ifc.Name, ipn, safeRange)
			}
		}
	}
	return nil
}

// setSysctl sets a machine-wide sysctl, recording the old value so teardown
// restores it.
func setSysctl(l *Ledger, name, value string) error {
	cur, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return fmt.Errorf("reading sysctl %s: %w", name, err)
	}
	old := strings.TrimSpace(string(cur))
	if old == value {
		return nil
	}
	if err := l.record(hostChangeSysctl, name, old); err != nil {
		return err
	}
	return os.WriteFile("/proc/sys/"+name, []byte(value), 0o644)
}

// WriteCNIConfig writes node i's CNI network: the shared bridge, addresses
// from the node's part of the subnet, a default route through the host (so
// a request to an outside address reaches the host's rules and is rejected
// there, visibly), and no masquerade. host-local keeps its allocations under
// the node's directory.
func WriteCNIConfig(nodeDir string, i int) (confDir string, err error) {
	if err := writeLoopbackOnlyCNIConfig(nodeDir, i); err != nil {
		return "", err
	}
	confDir = filepath.Join(nodeDir, "cni", "net.d")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return "", err
	}
	start, end, _ := realPodRangeOf(i)
	conf := map[string]any{
		"cniVersion": "1.0.0", "name": cniNetworkName,
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": nodeBridge,
			// The host's address is set on the bridge by the control plane; as a
			// gateway the plugin would switch on forwarding machine-wide.
			"isGateway": false, "ipMasq": false, "hairpinMode": true,
			"ipam": map[string]any{
				"type": "host-local",
				"ranges": []any{[]any{map[string]any{
					"subnet": realPodSubnet, "rangeStart": start, "rangeEnd": end, "gateway": PodAddress,
				}}},
				"routes":  []any{map[string]any{"dst": "0.0.0.0/0", "gw": PodAddress}},
				"dataDir": filepath.Join(nodeDir, "cni", "ipam"),
			},
		}},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return "", err
	}
	return confDir, os.WriteFile(filepath.Join(confDir, "10-localcluster.conflist"), b, 0o644)
}

// cniNetworkName names the pods' network in both CNI configurations: the
// bridge's and the loopback-only one share its host-local address store.
const cniNetworkName = "localcluster"

// LoopbackOnlyPlugin is the CNI plugin (nodeimage/loopbackonly) that reserves
// an address and creates no interface.
const LoopbackOnlyPlugin = "loopbackonly"

func LoopbackOnlyConfDir(nodeDir string) string {
	return filepath.Join(nodeDir, "cni", "loopback-only.d")
}

// writeLoopbackOnlyCNIConfig is the network of the runtime handlers whose
// pods must not join the bridge (runsc, and runc for the reject run): an
// address from the same allocator, so none is handed out twice, and nothing
// else. host-local keeps one store per network name under its dataDir, so
// both configurations carry the bridge's network name (cniNetworkName): under
// a name of its own this one handed out the bridge pods' addresses again.
func writeLoopbackOnlyCNIConfig(nodeDir string, i int) error {
	dir := LoopbackOnlyConfDir(nodeDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start, end, _ := realPodRangeOf(i)
	conf := map[string]any{
		"cniVersion": "1.0.0", "name": cniNetworkName,
		"plugins": []any{map[string]any{
			"type": LoopbackOnlyPlugin,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  []any{[]any{map[string]any{"subnet": realPodSubnet, "rangeStart": start, "rangeEnd": end}}},
				"dataDir": filepath.Join(nodeDir, "cni", "ipam"),
			},
		}},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "10-loopback-only.conflist"), b, 0o644)
}
