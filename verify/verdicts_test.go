package main

import (
	"errors"
	"testing"
	"time"
)

func ok(s string) ExecResult { return ExecResult{Stdout: s} }

var refused = ExecResult{Err: errors.New(`pods "warm-pool-bnsrk" is forbidden: User "dev" cannot create resource "pods/exec"`)}

// Each judge accepts the blueprint's printed output and rejects each way the
// evidence can be wrong, including an exec that never ran.
func TestJudges(t *testing.T) {
	bpUname := ok("6.18.54 #1 SMP PREEMPT_DYNAMIC Thu Oct 22 17:38:11 UTC 2026")
	ordUname := ok("6.18.56 #2 SMP PREEMPT_DYNAMIC Fri Oct 30 22:32:37 UTC 2026")
	ordProduct := ok("c6a.large\n")
	cases := []struct {
		name string
		v    verdict
		want bool
	}{
		{"exec works: blueprint", judgeExecWorks(bpUname), true},
		{"exec works: refused", judgeExecWorks(refused), false},
		{"exec works: non-zero exit", judgeExecWorks(ExecResult{ExitCode: 126, Stderr: "OCI runtime exec failed"}), false},
		{"exec works: empty answer", judgeExecWorks(ok("")), false},

		{"kernel: blueprint", judgeKernel(bpUname, ordUname), true},
		{"kernel: same as ordinary pod", judgeKernel(ordUname, ordUname), false},
		{"kernel: sandbox exec refused", judgeKernel(refused, ordUname), false},
		{"kernel: ordinary exec refused", judgeKernel(bpUname, refused), false},
		{"kernel: empty", judgeKernel(ok(" "), ordUname), false},

		{"uptime: blueprint 126.76s < 159s", judgeUptime(ok("126.76 123.80\n"), 159*time.Second), true},
		{"uptime: equal to pod age", judgeUptime(ok("159.00 1.0"), 159*time.Second), false},
		{"uptime: node's uptime", judgeUptime(ok("14680.50 27278.87"), 159*time.Second), false},
		{"uptime: garbage", judgeUptime(ok("up 3 days"), 159*time.Second), false},
		{"uptime: refused", judgeUptime(refused, 159*time.Second), false},

		{"block: blueprint", judgeBlockDevices(ok("dm-0\nvda\nvdb\nvdc\n")), true},
		{"block: nvme only", judgeBlockDevices(ok("dm-0 nvme0n1 nvme1n1 nvme2n1 zram0")), false},
		{"block: refused", judgeBlockDevices(refused), false},

		{"product: blueprint vs ordinary", judgeProductName(ok("c8a.enclave\n"), &ordProduct), true},
		{"product: blueprint alone", judgeProductName(ok("c8a.enclave"), nil), true},
		{"product: an EC2 instance type", judgeProductName(ok("c6a.large"), nil), false},
		{"product: an EC2 metal type", judgeProductName(ok("m7i.metal-24xl"), nil), false},
		{"product: 2xlarge", judgeProductName(ok("m5.2xlarge"), nil), false},
		{"product: same as ordinary", judgeProductName(ok("KVM"), &ExecResult{Stdout: "KVM"}), false},
		{"product: refused", judgeProductName(refused, nil), false},
		{"product: empty", judgeProductName(ok(""), nil), false},

		{"addr: blueprint", judgeLoopbackOnly(ok(bpAddr)), true},
		{"addr: a second interface", judgeLoopbackOnly(ok(bpAddr + "2: eth0    inet 10.0.3.7/24 brd 10.0.3.255 scope global eth0\\       valid_lft forever preferred_lft forever\n")), false},
		{"addr: an IPv6-only second interface", judgeLoopbackOnly(ok(bpAddr + "2: eth0    inet6 2600:1f14::7/128 scope global \\       valid_lft forever preferred_lft forever\n")), false},
		{"addr: a link-local IPv6 on eth0", judgeLoopbackOnly(ok(bpAddr + "3: eth0    inet6 fe80::1/64 scope link \\       valid_lft forever\n")), false},
		{"addr: a second interface, link line only", judgeLoopbackOnly(ok(bpAddr + "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP \\    link/ether 0a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff\n")), false},
		{"addr: a non-loopback address on lo", judgeLoopbackOnly(ok("1: lo    inet 10.1.1.1/32 scope global lo\n")), false},
		{"addr: nothing", judgeLoopbackOnly(ok("")), false},
		{"addr: refused", judgeLoopbackOnly(refused), false},

		{"routes: blueprint (both empty)", judgeNoDefaultRoute(ok(""), ok("")), true},
		{"routes: IPv4 default", judgeNoDefaultRoute(ok("default via 10.0.3.1 dev eth0"), ok("")), false},
		{"routes: IPv6-only default", judgeNoDefaultRoute(ok(""), ok("default via fe80::1 dev eth0 metric 1024 pref medium")), false},
		{"routes: refused v4", judgeNoDefaultRoute(refused, ok("")), false},
		{"routes: refused v6", judgeNoDefaultRoute(ok(""), refused), false},
		{"routes: ip missing", judgeNoDefaultRoute(ExecResult{ExitCode: 127, Stderr: "ip: not found"}, ok("")), false},

		{"request: blueprint bad address", judgeRequestFails(ExecResult{Stderr: "wget: bad address 'aws.amazon.com'\n", ExitCode: 1}), true},
		{"request: network unreachable", judgeRequestFails(ExecResult{Stderr: "wget: can't connect to remote host: Network is unreachable", ExitCode: 1}), true},
		{"request: 403 Forbidden", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com (18.0.0.1:443)\nwget: server returned error: HTTP/1.1 403 Forbidden", ExitCode: 1}), false},
		{"request: bare 403 Forbidden", judgeRequestFails(ExecResult{Stderr: "403 Forbidden", ExitCode: 8}), false},
		{"request: exit 0", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com", ExitCode: 0}), false},
		{"request: refused exec", judgeRequestFails(refused), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.v.OK != c.want {
				t.Fatalf("got ok=%t (%s), want %t", c.v.OK, c.v.Why, c.want)
			}
			if c.v.Why == "" {
				t.Fatal("a verdict must say why")
			}
		})
	}
}

func TestExecImpossible(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{errors.New("error dialing backend: dial tcp 10.0.0.9:10250: connect: connection refused"), true},
		{errors.New("no kubelet on this node"), true},
		{errors.New(`pods "x" is forbidden: User "dev" cannot create resource "pods/exec"`), false},
		{errors.New(`container not found ("agent")`), false},
		{nil, false},
	}
	for _, c := range cases {
		if got, _ := execImpossible(c.err); got != c.want {
			t.Errorf("execImpossible(%v) = %t, want %t", c.err, got, c.want)
		}
	}
}
