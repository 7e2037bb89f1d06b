package verifier

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// verdict is a pure judgement over exec output: ok and why, in words that
// quote what was read.
type verdict struct {
	OK  bool
	NA  bool // not applicable to the declared isolation (OK is false)
	Why string
}

func pass(format string, a ...any) verdict { return verdict{OK: true, Why: fmt.Sprintf(format, a...)} }
func fail(format string, a ...any) verdict { return verdict{Why: fmt.Sprintf(format, a...)} }

// notApplicable: the reading was taken but the declared isolation cannot
// show it; never counted as a pass.
func notApplicable(format string, a ...any) verdict {
	return verdict{NA: true, Why: fmt.Sprintf(format, a...)}
}

// notRan explains an exec that did not give an answer to judge.
func notRan(what string, r ExecResult) (verdict, bool) {
	if r.Err != nil {
		return fail("%s: the exec was refused or failed, so there is no reading (%v)", what, r.Err), true
	}
	if r.ExitCode != 0 {
		return fail("%s exited %d (stderr %q), so there is no reading", what, r.ExitCode, strings.TrimSpace(r.Stderr)), true
	}
	return verdict{}, false
}

// judgeExecWorks: the first reading came back, so the rest are the pod's answers.
func judgeExecWorks(r ExecResult) verdict {
	if v, bad := notRan("uname -rv", r); bad {
		return v
	}
	if strings.TrimSpace(r.Stdout) == "" {
		return fail("uname -rv printed nothing")
	}
	return pass("exec into the claimed pod answered (uname -rv -> %s), so the readings below are the pod's", strings.TrimSpace(r.Stdout))
}

// judgeKernel: a sandbox (a VM or gVisor) runs a kernel of its own, an
// ordinary pod and a runc pod share the node's. It compares `uname -rv` with
// the ordinary pod's; without an ordinary pod's reading, the release with the
// node's status.nodeInfo.kernelVersion.
func judgeKernel(sandbox ExecResult, ordinary *ExecResult, nodeKernel string) verdict {
	if v, bad := notRan("uname -rv in the claimed pod", sandbox); bad {
		return v
	}
	s := strings.TrimSpace(sandbox.Stdout)
	if s == "" {
		return fail("empty kernel reading in the claimed pod")
	}
	if ordinary == nil {
		release := strings.Fields(s)[0]
		if release == nodeKernel {
			return fail("the claimed pod reports kernel release %s, the node's own (status.nodeInfo.kernelVersion %s): it shares the node's kernel, it is not isolated", release, nodeKernel)
		}
		return pass("kernel release %s in the claimed pod, %s on the node (status.nodeInfo.kernelVersion; no ordinary pod's reading to compare with): the sandbox runs a kernel of its own", release, nodeKernel)
	}
	if v, bad := notRan("uname -rv in the ordinary pod", *ordinary); bad {
		return v
	}
	o := strings.TrimSpace(ordinary.Stdout)
	if o == "" {
		return fail("empty kernel reading in the ordinary pod")
	}
	if s == o {
		return fail("the claimed pod reports the same kernel as the ordinary pod (%s): it shares the node's kernel, it is not isolated", s)
	}
	return pass("kernel %q in the claimed pod, %q in the ordinary pod: the sandbox runs a kernel of its own", s, o)
}

// parseUptime reads the first field of /proc/uptime.
func parseUptime(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, fmt.Errorf("empty /proc/uptime")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("unreadable /proc/uptime %q", s)
	}
	return time.Duration(v * float64(time.Second)), nil
}

// judgeUptime: the guest booted after the pod was created, so its uptime is
// shorter than the pod's age; a shared node kernel has been up far longer.
func judgeUptime(r ExecResult, podAge time.Duration) verdict {
	if v, bad := notRan("cat /proc/uptime", r); bad {
		return v
	}
	up, err := parseUptime(r.Stdout)
	if err != nil {
		return fail("%v", err)
	}
	if up >= podAge {
		return fail("guest uptime %s is not shorter than the pod's age %s: this kernel was up before the pod existed", up.Round(time.Millisecond), podAge.Round(time.Second))
	}
	return pass("guest uptime %s is shorter than the pod's age %s: the kernel booted for this pod", up.Round(time.Millisecond), podAge.Round(time.Second))
}

// judgeBlockDevices: a sandbox VM sees virtio disks (vd*). gVisor shows no
// block device at all, so under gvisor an empty /sys/block is N/A (a VM's
// reading) and any device listed is the node's, seen through its /sys: FAIL.
func judgeBlockDevices(r ExecResult, iso string) verdict {
	if v, bad := notRan("ls /sys/block", r); bad {
		return v
	}
	devs := strings.Fields(r.Stdout)
	if iso == isolationGVisor {
		if len(devs) == 0 {
			return notApplicable("/sys/block is empty, as gVisor shows it: virtio block devices are a VM's reading, not gVisor's")
		}
		return fail("/sys/block lists %s, but gVisor shows no block device: these are the node's disks, so the pod sees the node's /sys", strings.Join(devs, " "))
	}
	var vd []string
	for _, d := range devs {
		if strings.HasPrefix(d, "vd") {
			vd = append(vd, d)
		}
	}
	if len(vd) == 0 {
		return fail("no virtio block device (vd*) in /sys/block: %q", strings.Join(devs, " "))
	}
	return pass("virtio block devices %v in /sys/block (%s)", vd, strings.Join(devs, " "))
}

// ec2InstanceType matches names like c6a.large, m5.2xlarge, t3.micro, i4i.metal.
var ec2InstanceType = regexp.MustCompile(`^[a-z][a-z0-9-]*[0-9][a-z0-9-]*\.(nano|micro|small|medium|large|xlarge|[0-9]+xlarge|metal(-[0-9]+xl)?)$`)

// judgeProductName: the sandbox describes its own guest, never an EC2
// instance type; when an ordinary pod was read, the names must differ. gVisor
// has no DMI tables: their absence is N/A under gvisor, a name read is the
// node's (FAIL).
func judgeProductName(sandbox ExecResult, ordinary *ExecResult, iso string) verdict {
	if iso == isolationGVisor {
		if sandbox.Err != nil {
			return fail("cat /sys/class/dmi/id/product_name: the exec was refused or failed, so there is no reading (%v)", sandbox.Err)
		}
		errText := strings.TrimSpace(sandbox.Stderr)
		if sandbox.ExitCode == 1 && strings.HasSuffix(errText, "No such file or directory") {
			return notApplicable("no DMI tables in the sandbox (%q), as gVisor shows it: a DMI product name is a VM's reading, not gVisor's", errText)
		}
		if sandbox.ExitCode != 0 {
			return fail("cat /sys/class/dmi/id/product_name exited %d (stderr %q): neither a product name nor the absent file gVisor shows", sandbox.ExitCode, errText)
		}
		return fail("DMI product name %q is readable, but gVisor has no DMI tables: it is the node's, so the pod sees the node's /sys", strings.TrimSpace(sandbox.Stdout))
	}
	if v, bad := notRan("cat /sys/class/dmi/id/product_name", sandbox); bad {
		return v
	}
	s := strings.TrimSpace(sandbox.Stdout)
	if s == "" {
		return fail("empty DMI product name")
	}
	if ec2InstanceType.MatchString(s) {
		return fail("DMI product name %q is an EC2 instance type: the pod sees the instance, not a guest of its own", s)
	}
	if ordinary != nil && ordinary.ran() {
		o := strings.TrimSpace(ordinary.Stdout)
		if o == s {
			return fail("DMI product name %q is the same as the ordinary pod's", s)
		}
		return pass("DMI product name %q in the claimed pod, %q in the ordinary pod: the sandbox describes its own VM", s, o)
	}
	return pass("DMI product name %q is not an EC2 instance type: the sandbox describes its own VM", s)
}

// judgeLoopbackOnly reads `ip -o addr show`: every address line must be on lo
// and be a loopback address, in both families; any other interface, or a
// line that cannot be read, rejects.
func judgeLoopbackOnly(r ExecResult) verdict {
	if v, bad := notRan("ip -o addr show", r); bad {
		return v
	}
	var addrs []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return fail("unreadable line %q", line)
		}
		ifname := strings.TrimSuffix(f[1], ":")
		if ifname != "lo" {
			return fail("interface %s is present (%q): the pod has a network interface besides loopback", ifname, line)
		}
		if len(f) < 4 || (f[2] != "inet" && f[2] != "inet6") {
			continue // a link line for lo carries no address
		}
		p, err := netip.ParsePrefix(f[3])
		if err != nil {
			return fail("unreadable address %q on lo", f[3])
		}
		if !p.Addr().IsLoopback() {
			return fail("lo carries a non-loopback address %s", p)
		}
		addrs = append(addrs, f[2]+" "+f[3])
	}
	if len(addrs) == 0 {
		return fail("ip -o addr show listed no address at all (%q): cannot tell what it read", strings.TrimSpace(r.Stdout))
	}
	return pass("only lo has addresses (%s), in either address family: no interface to carry traffic", strings.Join(addrs, ", "))
}

// routeTypes are the route types `ip route` prints before the destination.
var routeTypes = map[string]bool{"unicast": true, "local": true, "broadcast": true, "multicast": true, "anycast": true,
	"throw": true, "nat": true, "unreachable": true, "blackhole": true, "prohibit": true}

// judgeRoutes reads one family's `ip route show default` listing line by
// line, by what each route is, not by whether the listing is empty: gVisor's
// netlink ignores the filter and lists its loopback routes. A default route
// that carries traffic fails, and so does any route off loopback (with the
// filter ignored the listing is the whole table); a loopback route, or a
// default route of type unreachable/blackhole/prohibit, carries nothing out.
func judgeRoutes(family string, r ExecResult) (ok bool, why string) {
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		typ := "unicast"
		if routeTypes[f[0]] {
			typ, f = f[0], f[1:]
		}
		if len(f) == 0 {
			return false, fmt.Sprintf("unreadable %s route %q", family, line)
		}
		dev := ""
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "dev" {
				dev = f[i+1]
			}
		}
		dst := f[0]
		isDefault := dst == "default" || dst == "0.0.0.0/0" || dst == "::/0"
		switch {
		case isDefault && (typ == "unreachable" || typ == "blackhole" || typ == "prohibit"):
			seen = append(seen, fmt.Sprintf("%q (a %s default route carries nothing)", line, typ))
		case isDefault:
			return false, fmt.Sprintf("an %s default route exists: %q", family, line)
		case dev == "lo":
			seen = append(seen, fmt.Sprintf("%q (a loopback route, not a default route)", line))
		default:
			return false, fmt.Sprintf("%s route %q does not go through lo: a route off loopback is a way out of the pod", family, line)
		}
	}
	if len(seen) == 0 {
		return true, family + ": no route printed"
	}
	return true, family + ": " + strings.Join(seen, ", ")
}

// judgeNoDefaultRoute: `ip -4 route show default` and `ip -6 route show
// default` both ran and list no route that could carry traffic out.
func judgeNoDefaultRoute(v4, v6 ExecResult) verdict {
	if v, bad := notRan("ip -4 route show default", v4); bad {
		return v
	}
	if v, bad := notRan("ip -6 route show default", v6); bad {
		return v
	}
	ok4, why4 := judgeRoutes("IPv4", v4)
	if !ok4 {
		return fail("%s", why4)
	}
	ok6, why6 := judgeRoutes("IPv6", v6)
	if !ok6 {
		return fail("%s", why6)
	}
	return pass("no default route in either family (%s; %s)", why4, why6)
}

// requestCommand tries the outbound request with the sandbox image's probe,
// /bin/httpprobe (a static Go HTTP client: Go's error text and a non-zero exit
// on failure, "HTTP <status>" and exit 0 on an answer), else with wget. It
// prints which tool ran, and exits 127 when there is none.
func requestCommand(url string) []string {
	const script = `if [ -x /bin/httpprobe ]; then echo "request tool: /bin/httpprobe"; exec /bin/httpprobe "$1"; fi; ` +
		`if command -v wget >/dev/null 2>&1; then echo "request tool: wget"; exec wget -T 5 -O /dev/null "$1"; fi; ` +
		`echo "no request tool: neither /bin/httpprobe nor wget is in the image"; exit 127`
	return []string{"sh", "-c", script, "request", url}
}

// reachedSignatures show the request reached something: an HTTP answer, a
// TCP connection made before TLS or HTTP failed, a reset, or a refusal (in a
// pod with only loopback nothing outside can answer, so an RST means the
// packet left the pod), or a timeout (a loopback-only pod fails at once with
// "network is unreachable"; a timeout means packets went out and were
// dropped). Each is a FAIL, checked before any no-network signature.
var reachedSignatures = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`HTTP/[0-9.]+|\bHTTP [1-5][0-9][0-9]\b|\b[1-5][0-9][0-9] [A-Z][a-z]+|server returned error|saving to|written to|server gave HTTP response|malformed HTTP`), "an HTTP answer: the pod reached a server"},
	{regexp.MustCompile(`(?i)\bconnected\.|unable to establish ssl|ssl_client:|ssl routines|\btls: |x509: |handshake fail|remote error`), "a TCP connection was made before TLS or HTTP failed: the pod reached a server"},
	{regexp.MustCompile(`(?i)connection reset|reset by peer|broken pipe|: EOF\b|unexpected EOF`), "the connection was made and then reset or closed: the pod reached a server"},
	{regexp.MustCompile(`(?i)timed out|timeout|deadline exceeded`), "the request timed out: packets left the pod and were dropped (a pod with only loopback fails at once with \"network is unreachable\")"},
	{regexp.MustCompile(`(?i)no such host|NXDOMAIN`), "a resolver answered that the name does not exist: the pod reached a DNS server"},
}

// connectionRefused is a refusal; on a loopback DNS server it is a
// resolution failure inside the pod, anywhere else a reply from outside.
var (
	connectionRefused = regexp.MustCompile(`(?i)connection refused`)
	loopbackLookup    = regexp.MustCompile(`lookup \S+ on (127\.[0-9.]+|\[::1\]):53: .*connection refused`)
)

// noNetworkSignatures are the only outputs that pass: the request failed
// because there is no network (each names the tool that prints it).
var noNetworkSignatures = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`(?i)network is unreachable`), "network unreachable (wget: \"can't connect to remote host: Network is unreachable\"; Go: \"connect: network is unreachable\")"},
	{regexp.MustCompile(`(?i)no route to host`), "no route to host"},
	{regexp.MustCompile(`wget: bad address '`), "name resolution failed (busybox wget: bad address)"},
	{regexp.MustCompile(`(?i)temporary failure in name resolution`), "name resolution failed (no resolver reachable)"},
	{loopbackLookup, "name resolution failed (Go: the only resolver is on loopback and nothing serves it)"},
}

// judgeRequestFails: the outbound request was really made (a request tool
// ran and exited with its own failure) and failed with one of the explicit
// no-network signatures. Anything else fails: exit 0, an HTTP answer, a
// connection made, a refusal or timeout from outside, a missing (126/127)
// or crashed (signal) tool, no output, or an output no signature explains.
func judgeRequestFails(r ExecResult) verdict {
	if r.Err != nil {
		return fail("the exec was refused or failed, so the request was never tried (%v)", r.Err)
	}
	out := strings.TrimSpace(strings.TrimSpace(r.Stdout) + "\n" + strings.TrimSpace(r.Stderr))
	switch {
	case r.ExitCode == 0:
		return fail("the request succeeded (exit 0, %q): the pod reached the network", out)
	case r.ExitCode == 126 || r.ExitCode == 127:
		return fail("no request was made: the request tool is missing or cannot run (exit %d: %q); the image needs /bin/httpprobe or wget", r.ExitCode, out)
	case r.ExitCode > 128:
		return fail("no request result: the request tool was killed by signal %d (exit %d: %q), which proves nothing about the network", r.ExitCode-128, r.ExitCode, out)
	}
	body := strings.TrimSpace(strings.Join(dropToolLine(strings.Split(out, "\n")), "\n"))
	if body == "" {
		return fail("the request tool exited %d and printed nothing about why: no evidence the request was made", r.ExitCode)
	}
	for _, s := range reachedSignatures {
		if s.re.MatchString(body) {
			return fail("%s (exit %d: %q)", s.what, r.ExitCode, out)
		}
	}
	if connectionRefused.MatchString(body) && !loopbackLookup.MatchString(body) {
		return fail("the connection was refused: in a pod with only loopback nothing outside can refuse it, so a reply came back (exit %d: %q)", r.ExitCode, out)
	}
	for _, s := range noNetworkSignatures {
		if s.re.MatchString(body) {
			return pass("the request failed for lack of a network: %s (exit %d: %q)", s.what, r.ExitCode, out)
		}
	}
	return fail("the request failed (exit %d: %q), but not with a known no-network signature (network unreachable, no route to host, name resolution failed), so it does not show there is no network", r.ExitCode, out)
}

// dropToolLine removes requestCommand's "request tool: ..." line and
// busybox wget's "wget: note: TLS certificate validation not implemented",
// which it prints whatever happens.
func dropToolLine(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "request tool: ") && !strings.HasPrefix(l, "wget: note: ") {
			out = append(out, l)
		}
	}
	return out
}
