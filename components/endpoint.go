package components

import (
	"fmt"
	"net/netip"
)

// EKS's upgrade policies (UpgradePolicyRequest.supportType). Without one EKS applies EXTENDED:
// a version past its 14 months of standard support moves into extended support, billed at
// $0.60 per cluster-hour instead of $0.10 (Amazon EKS pricing), with nothing in the stack
// saying so. STANDARD upgrades the control plane to the next version at the end of standard
// support instead.
const (
	UpgradePolicyStandard = "STANDARD"
	UpgradePolicyExtended = "EXTENDED"
)

// MaxPublicAccessCidrs is EKS's quota of CIDR blocks on the public endpoint ("Public endpoint
// access CIDR ranges per cluster", Amazon EKS service quotas).
const MaxPublicAccessCidrs = 40

// ClusterLogTypes are the control-plane log types EKS can send to CloudWatch Logs
// (LogSetup.types in the EKS API reference; pulumi-eks's enabledClusterLogTypes).
var ClusterLogTypes = []string{"api", "audit", "authenticator", "controllerManager", "scheduler"}

// notPublic are IPv4 ranges no client on the internet reaches the public endpoint from, beside
// the private, loopback and link-local ones netip knows (RFC 6890's special-purpose registry):
// the endpoint matches the caller's public address, so a block inside one allows no one.
var notPublic = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("100.64.0.0/10"), "the shared address space of carrier-grade NAT (RFC 6598): a client there reaches AWS from its carrier's public address"},
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 1122), never a source on the internet`},
	{netip.MustParsePrefix("198.18.0.0/15"), "the benchmarking range (RFC 2544), never routed on the internet"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast, never a client's address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112), never routed"},
}

// CheckPublicAccessCidr says what is wrong with one entry of the public endpoint's allow list,
// or "" when EKS takes it: an IPv4 network in canonical form that a client on the internet can
// come from (EKS matches the public endpoint against the caller's public address, so a private
// range never matches anyone).
func CheckPublicAccessCidr(key, cidr string) string {
	p, err := netip.ParsePrefix(cidr)
	switch {
	case err != nil:
		return fmt.Sprintf("%s has %q, which is not a CIDR block; write it as an IPv4 network such as 203.0.113.0/24 (a single address: 203.0.113.7/32)", key, cidr)
	case !p.Addr().Is4():
		return fmt.Sprintf("%s has %q; EKS's public endpoint takes IPv4 CIDR blocks only", key, cidr)
	case p.Masked() != p:
		return fmt.Sprintf("%s has %q, whose address has bits beyond its /%d; write the network, %s", key, cidr, p.Bits(), p.Masked())
	case p.Addr().IsPrivate() || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast():
		return fmt.Sprintf("%s has %q, a private range: the public endpoint sees a client's public address, so it never matches; list the public address your runners leave from, "+
			"or reach the private endpoint from inside the VPC (endpointPrivateAccess)", key, cidr)
	}
	for _, n := range notPublic {
		if p.Bits() >= n.prefix.Bits() && n.prefix.Contains(p.Addr()) && p.Bits() > 0 {
			return fmt.Sprintf("%s has %q, inside %s, %s; list the public address your clients leave from", key, cidr, n.prefix, n.what)
		}
	}
	return ""
}
