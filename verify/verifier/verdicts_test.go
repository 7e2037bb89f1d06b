package verifier

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/verify/report"
)

func ok(s string) ExecResult { return ExecResult{Stdout: s} }

var noDMI = ExecResult{Stderr: "cat: can't open '/sys/class/dmi/id/product_name': No such file or directory\n", ExitCode: 1}

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

		{"kernel: blueprint", judgeKernel(bpUname, &ordUname, "6.18.56"), true},
		{"kernel: same as ordinary pod", judgeKernel(ordUname, &ordUname, "6.18.56"), false},
		{"kernel: sandbox exec refused", judgeKernel(refused, &ordUname, "6.18.56"), false},
		{"kernel: ordinary exec refused", judgeKernel(bpUname, &refused, "6.18.56"), false},
		{"kernel: empty", judgeKernel(ok(" "), &ordUname, "6.18.56"), false},
		{"kernel: no ordinary pod, differs from the node's", judgeKernel(bpUname, nil, "6.18.56"), true},
		{"kernel: no ordinary pod, the node's release", judgeKernel(ordUname, nil, "6.18.56"), false},

		{"uptime: blueprint 126.76s < 159s", judgeUptime(ok("126.76 123.80\n"), 159*time.Second), true},
		{"uptime: equal to pod age", judgeUptime(ok("159.00 1.0"), 159*time.Second), false},
		{"uptime: node's uptime", judgeUptime(ok("14680.50 27278.87"), 159*time.Second), false},
		{"uptime: garbage", judgeUptime(ok("up 3 days"), 159*time.Second), false},
		{"uptime: refused", judgeUptime(refused, 159*time.Second), false},

		{"block: blueprint", judgeBlockDevices(ok("dm-0\nvda\nvdb\nvdc\n"), isolationVM), true},
		{"block: nvme only", judgeBlockDevices(ok("dm-0 nvme0n1 nvme1n1 nvme2n1 zram0"), isolationVM), false},
		{"block: empty under vm", judgeBlockDevices(ok(""), isolationVM), false},
		{"block: refused", judgeBlockDevices(refused, isolationVM), false},

		{"product: blueprint vs ordinary", judgeProductName(ok("c8a.enclave\n"), &ordProduct, isolationVM), true},
		{"product: blueprint alone", judgeProductName(ok("c8a.enclave"), nil, isolationVM), true},
		{"product: an EC2 instance type", judgeProductName(ok("c6a.large"), nil, isolationVM), false},
		{"product: an EC2 metal type", judgeProductName(ok("m7i.metal-24xl"), nil, isolationVM), false},
		{"product: 2xlarge", judgeProductName(ok("m5.2xlarge"), nil, isolationVM), false},
		{"product: same as ordinary", judgeProductName(ok("KVM"), &ExecResult{Stdout: "KVM"}, isolationVM), false},
		{"product: refused", judgeProductName(refused, nil, isolationVM), false},
		{"product: empty", judgeProductName(ok(""), nil, isolationVM), false},
		{"product: absent under vm", judgeProductName(noDMI, nil, isolationVM), false},

		{"addr: blueprint", judgeLoopbackOnly(ok(bpAddr)), true},
		{"addr: a second interface", judgeLoopbackOnly(ok(bpAddr + "2: eth0    inet 10.0.3.7/24 brd 10.0.3.255 scope global eth0\\       valid_lft forever preferred_lft forever\n")), false},
		{"addr: an IPv6-only second interface", judgeLoopbackOnly(ok(bpAddr + "2: eth0    inet6 2600:1f14::7/128 scope global \\       valid_lft forever preferred_lft forever\n")), false},
		{"addr: a link-local IPv6 on eth0", judgeLoopbackOnly(ok(bpAddr + "3: eth0    inet6 fe80::1/64 scope link \\       valid_lft forever\n")), false},
		{"addr: a second interface, link line only", judgeLoopbackOnly(ok(bpAddr + "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9001 qdisc mq state UP \\    link/ether 0a:1b:2c:3d:4e:5f brd ff:ff:ff:ff:ff:ff\n")), false},
		{"addr: a non-loopback address on lo", judgeLoopbackOnly(ok("1: lo    inet 10.1.1.1/32 scope global lo\n")), false},
		{"addr: nothing", judgeLoopbackOnly(ok("")), false},
		{"addr: refused", judgeLoopbackOnly(refused), false},

		{"routes: blueprint (both empty)", judgeNoDefaultRoute(ok(""), ok("")), true},
		{"routes: gVisor lists loopback routes despite the filter", judgeNoDefaultRoute(ok("127.0.0.0/8 dev lo\n"), ok("::1 dev lo metric 256\nlocal ::1 dev lo table local proto kernel metric 0 pref medium\n")), true},
		{"routes: an unreachable default", judgeNoDefaultRoute(ok("unreachable default metric 4278198272"), ok("")), true},
		{"routes: IPv4 default next to a loopback route", judgeNoDefaultRoute(ok("127.0.0.0/8 dev lo\ndefault via 198.18.0.1 dev eth0"), ok("")), false},
		{"routes: 0.0.0.0/0 spelled out", judgeNoDefaultRoute(ok("0.0.0.0/0 via 198.18.0.1 dev eth0"), ok("")), false},
		{"routes: a route off loopback (filter ignored)", judgeNoDefaultRoute(ok("198.18.0.0/16 dev eth0 scope link"), ok("")), false},
		{"routes: a unicast default with its type", judgeNoDefaultRoute(ok(""), ok("unicast default via fe80::1 dev eth0")), false},
		{"routes: IPv4 default", judgeNoDefaultRoute(ok("default via 10.0.3.1 dev eth0"), ok("")), false},
		{"routes: IPv6-only default", judgeNoDefaultRoute(ok(""), ok("default via fe80::1 dev eth0 metric 1024 pref medium")), false},
		{"routes: refused v4", judgeNoDefaultRoute(refused, ok("")), false},
		{"routes: refused v6", judgeNoDefaultRoute(ok(""), refused), false},
		{"routes: ip missing", judgeNoDefaultRoute(ExecResult{ExitCode: 127, Stderr: "ip: not found"}, ok("")), false},

		{"request: blueprint bad address", judgeRequestFails(ExecResult{Stdout: "request tool: wget\n", Stderr: "wget: bad address 'aws.amazon.com'\n", ExitCode: 1}), true},
		{"request: wget network unreachable", judgeRequestFails(ExecResult{Stderr: "wget: can't connect to remote host (1.1.1.1): Network is unreachable", ExitCode: 1}), true},
		{"request: wget no route to host", judgeRequestFails(ExecResult{Stderr: "wget: can't connect to remote host (1.1.1.1): No route to host", ExitCode: 1}), true},
		{"request: httpprobe network unreachable", judgeRequestFails(ExecResult{Stdout: "request tool: /bin/httpprobe\n", Stderr: "dial tcp 1.1.1.1:80: connect: network is unreachable", ExitCode: 1}), true},
		{"request: httpprobe, no resolver but loopback", judgeRequestFails(ExecResult{Stderr: `Get "https://aws.amazon.com": dial tcp: lookup aws.amazon.com on [::1]:53: read udp [::1]:41256->[::1]:53: read: connection refused`, ExitCode: 1}), true},
		{"request: busybox TLS note then unreachable", judgeRequestFails(ExecResult{Stderr: "wget: note: TLS certificate validation not implemented\nwget: can't connect to remote host (1.1.1.1): Network is unreachable", ExitCode: 1}), true},
		{"request: 403 Forbidden", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com (18.0.0.1:443)\nwget: server returned error: HTTP/1.1 403 Forbidden", ExitCode: 1}), false},
		{"request: bare 403 Forbidden", judgeRequestFails(ExecResult{Stderr: "403 Forbidden", ExitCode: 8}), false},
		{"request: httpprobe got an answer", judgeRequestFails(ExecResult{Stdout: "request tool: /bin/httpprobe\nHTTP 301\n", ExitCode: 0}), false},
		{"request: httpprobe answer with a non-zero exit", judgeRequestFails(ExecResult{Stdout: "HTTP 503\n", ExitCode: 1}), false},
		{"request: exit 0", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com", ExitCode: 0}), false},
		{"request: refused exec", judgeRequestFails(refused), false},
		{"request: tool missing (127)", judgeRequestFails(ExecResult{Stdout: "no request tool: neither /bin/httpprobe nor wget is in the image\n", ExitCode: 127}), false},
		{"request: sh missing (127), no output", judgeRequestFails(ExecResult{ExitCode: 127}), false},
		{"request: tool cannot execute (126)", judgeRequestFails(ExecResult{Stderr: "sh: /bin/httpprobe: Permission denied", ExitCode: 126}), false},
		{"request: wget segfaults (139)", judgeRequestFails(ExecResult{Stdout: "request tool: wget\n", ExitCode: 139}), false},
		{"request: killed with output that looks like no network", judgeRequestFails(ExecResult{Stderr: "network is unreachable", ExitCode: 137}), false},
		{"request: non-zero exit, no output", judgeRequestFails(ExecResult{ExitCode: 1}), false},
		{"request: only the tool line", judgeRequestFails(ExecResult{Stdout: "request tool: wget\n", ExitCode: 1}), false},
		{"request: connected, then SSL failed (GNU wget)", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com|18.0.0.1|:443... connected.\nUnable to establish SSL connection.", ExitCode: 4}), false},
		{"request: TLS handshake failed (Go)", judgeRequestFails(ExecResult{Stderr: `Get "https://aws.amazon.com": remote error: tls: handshake failure`, ExitCode: 1}), false},
		{"request: x509 (Go)", judgeRequestFails(ExecResult{Stderr: `Get "https://aws.amazon.com": tls: failed to verify certificate: x509: certificate signed by unknown authority`, ExitCode: 1}), false},
		{"request: reset by peer (busybox)", judgeRequestFails(ExecResult{Stderr: "wget: error getting response: Connection reset by peer", ExitCode: 1}), false},
		{"request: EOF (Go)", judgeRequestFails(ExecResult{Stderr: `Get "https://aws.amazon.com": EOF`, ExitCode: 1}), false},
		{"request: connection refused by the target", judgeRequestFails(ExecResult{Stderr: "wget: can't connect to remote host (1.1.1.1): Connection refused", ExitCode: 1}), false},
		{"request: refused on IPv4 after IPv6 was unreachable", judgeRequestFails(ExecResult{Stderr: "dial tcp [2606:4700::1111]:443: connect: network is unreachable\ndial tcp 1.1.1.1:443: connect: connection refused", ExitCode: 1}), false},
		{"request: connection refused (Go)", judgeRequestFails(ExecResult{Stderr: "dial tcp 1.1.1.1:80: connect: connection refused", ExitCode: 1}), false},
		{"request: timeout (busybox)", judgeRequestFails(ExecResult{Stderr: "wget: download timed out", ExitCode: 1}), false},
		{"request: timeout (Go)", judgeRequestFails(ExecResult{Stderr: `Get "http://1.1.1.1": dial tcp 1.1.1.1:80: i/o timeout`, ExitCode: 1}), false},
		{"request: DNS timeout (Go)", judgeRequestFails(ExecResult{Stderr: `dial tcp: lookup aws.amazon.com on 198.18.0.10:53: read udp: i/o timeout`, ExitCode: 1}), false},
		{"request: a resolver said no such host", judgeRequestFails(ExecResult{Stderr: `dial tcp: lookup aws.amazon.com on 198.18.0.10:53: no such host`, ExitCode: 1}), false},
		{"request: a proxy answered about an unreachable network", judgeRequestFails(ExecResult{Stderr: "wget: server returned error: HTTP/1.1 502 Bad Gateway (network is unreachable)", ExitCode: 1}), false},
		{"request: connected, then no route to host", judgeRequestFails(ExecResult{Stderr: "Connecting to aws.amazon.com|18.0.0.1|:443... connected.\nNo route to host", ExitCode: 4}), false},
		{"request: an unknown failure", judgeRequestFails(ExecResult{Stderr: "wget: something odd happened", ExitCode: 1}), false},
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

// Under --isolation gvisor the VM-only readings are N/A when they read as
// gVisor shows them, and FAIL when they contradict it (the node's disks or
// DMI name seen through its /sys); a refused exec FAILs either way.
func TestJudgesUnderGVisor(t *testing.T) {
	cases := []struct {
		name string
		v    verdict
		want report.Status
	}{
		{"block: empty", judgeBlockDevices(ok(""), isolationGVisor), report.NA},
		{"block: the node's disks", judgeBlockDevices(ok("dm-0 nvme0n1 zram0"), isolationGVisor), report.Fail},
		{"block: virtio disks", judgeBlockDevices(ok("vda vdb"), isolationGVisor), report.Fail},
		{"block: refused", judgeBlockDevices(refused, isolationGVisor), report.Fail},
		{"product: absent", judgeProductName(noDMI, nil, isolationGVisor), report.NA},
		{"product: the node's name", judgeProductName(ok("c6a.large\n"), nil, isolationGVisor), report.Fail},
		{"product: cat missing", judgeProductName(ExecResult{Stderr: "sh: cat: not found", ExitCode: 127}, nil, isolationGVisor), report.Fail},
		{"product: permission denied", judgeProductName(ExecResult{Stderr: "cat: can't open '/sys/class/dmi/id/product_name': Permission denied", ExitCode: 1}, nil, isolationGVisor), report.Fail},
		{"product: refused", judgeProductName(refused, nil, isolationGVisor), report.Fail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := report.Fail
			switch {
			case c.v.NA:
				got = report.NA
			case c.v.OK:
				got = report.Pass
			}
			if got != c.want || c.v.Why == "" {
				t.Fatalf("got %s (%s), want %s", got, c.v.Why, c.want)
			}
		})
	}
}

// Only the node object decides that there is no kubelet.
func TestNoKubelet(t *testing.T) {
	withPort := func(p int32, anno map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: anno},
			Status: corev1.NodeStatus{DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: p}}}}
	}
	cases := []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"KWOK node", withPort(10247, map[string]string{annoKwokNode: "fake"}), true},
		{"no kubelet endpoint", withPort(0, nil), true},
		{"a kubelet", withPort(10250, nil), false},
		{"a kubelet, the annotation with another value", withPort(10250, map[string]string{annoKwokNode: "real"}), false},
	}
	for _, c := range cases {
		if got, why := noKubelet(c.node); got != c.want || (got && why == "") {
			t.Errorf("%s: noKubelet = %t (%s), want %t", c.name, got, why, c.want)
		}
	}
}
