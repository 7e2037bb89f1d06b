package main

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
	Why string
}

func pass(format string, a ...any) verdict { return verdict{true, fmt.Sprintf(format, a...)} }
func fail(format string, a ...any) verdict { return verdict{false, fmt.Sprintf(format, a...)} }

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

// judgeKernel: a sandbox boots its own kernel, an ordinary pod shares its node's.
func judgeKernel(sandbox, ordinary ExecResult) verdict {
	if v, bad := notRan("uname -rv in the claimed pod", sandbox); bad {
		return v
	}
	if v, bad := notRan("uname -rv in the ordinary pod", ordinary); bad {
		return v
	}
	s, o := strings.TrimSpace(sandbox.Stdout), strings.TrimSpace(ordinary.Stdout)
	if s == "" || o == "" {
		return fail("empty kernel reading (sandbox %q, ordinary %q)", s, o)
	}
	if s == o {
		return fail("the claimed pod reports the same kernel as the ordinary pod (%s): it shares a kernel, it is not in a VM of its own", s)
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

// judgeBlockDevices: a sandbox VM sees virtio disks (vd*).
func judgeBlockDevices(r ExecResult) verdict {
	if v, bad := notRan("ls /sys/block", r); bad {
		return v
	}
	var vd []string
	for _, d := range strings.Fields(r.Stdout) {
		if strings.HasPrefix(d, "vd") {
			vd = append(vd, d)
		}
	}
	if len(vd) == 0 {
		return fail("no virtio block device (vd*) in /sys/block: %q", strings.Join(strings.Fields(r.Stdout), " "))
	}
	return pass("virtio block devices %v in /sys/block (%s)", vd, strings.Join(strings.Fields(r.Stdout), " "))
}

// ec2InstanceType matches names like c6a.large, m5.2xlarge, t3.micro, i4i.metal.
var ec2InstanceType = regexp.MustCompile(`^[a-z][a-z0-9-]*[0-9][a-z0-9-]*\.(nano|micro|small|medium|large|xlarge|[0-9]+xlarge|metal(-[0-9]+xl)?)$`)

// judgeProductName: the sandbox describes its own guest, never an EC2
// instance type; when an ordinary pod was read, the names must differ.
func judgeProductName(sandbox ExecResult, ordinary *ExecResult) verdict {
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

// judgeNoDefaultRoute: both `ip route show default` and `ip -6 route show
// default` ran and printed nothing.
func judgeNoDefaultRoute(v4, v6 ExecResult) verdict {
	if v, bad := notRan("ip route show default", v4); bad {
		return v
	}
	if v, bad := notRan("ip -6 route show default", v6); bad {
		return v
	}
	if s := strings.TrimSpace(v4.Stdout); s != "" {
		return fail("an IPv4 default route exists: %q", s)
	}
	if s := strings.TrimSpace(v6.Stdout); s != "" {
		return fail("an IPv6 default route exists: %q", s)
	}
	return pass("ip route show default and ip -6 route show default both print nothing: no default route in either family")
}

// httpAnswer spots output showing the request reached an HTTP server.
var httpAnswer = regexp.MustCompile(`(?i)HTTP/[0-9.]+|\b[1-5][0-9][0-9] [A-Z][a-z]+|server returned error|saving to|written to`)

// judgeRequestFails: the outbound request ran (exec worked), exited non-zero
// and got no HTTP answer of any kind; a 403 means it reached the internet.
func judgeRequestFails(r ExecResult) verdict {
	if r.Err != nil {
		return fail("the exec was refused or failed, so the request was never tried (%v)", r.Err)
	}
	out := strings.TrimSpace(r.Stdout + "\n" + r.Stderr)
	if r.ExitCode == 0 {
		return fail("the request succeeded (exit 0, %q): the pod reached the network", out)
	}
	if httpAnswer.MatchString(out) {
		return fail("the request got an HTTP answer (%q, exit %d): the pod reached a server", out, r.ExitCode)
	}
	return pass("the request failed without reaching anything (exit %d: %q)", r.ExitCode, out)
}
