package verifier

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The readings' check names, in order; skipReadings marks them all SKIP.
var readingChecks = []struct{ phase, name string }{
	{"sandbox", "exec into the claimed pod works"},
	{"sandbox", "the claimed pod runs its own kernel"},
	{"sandbox", "the guest booted after the pod was created"},
	{"sandbox", "the claimed pod sees virtio block devices"},
	{"sandbox", "the DMI product name is the sandbox's own"},
	{"no-network", "only loopback has an address"},
	{"no-network", "no default route in either family"},
	{"no-network", "an outbound request fails"},
}

// failReadings reports every reading as FAIL with one reason.
func (r *Runner) failReadings(reason string) {
	for _, c := range readingChecks {
		r.rep.Fail(c.phase, c.name, reason)
	}
}

// skipReadings reports every reading as not taken. With --require-exec it
// is a FAIL instead: the user asked for the readings to be proven.
func (r *Runner) skipReadings(reason string) {
	for _, c := range readingChecks {
		if r.cfg.RequireExec {
			r.rep.Fail(c.phase, c.name, "not read: "+reason+" (--require-exec)")
		} else {
			r.rep.Skip(c.phase, c.name, "not read: "+reason)
		}
	}
}

// execIn runs one command with the exec timeout and prints it like kubectl:
// in the pool's namespace (the claimed pod), or the stack's for the ordinary
// pod, which is the exporter's.
//
// An exec the container runtime itself failed (the kubelet's "error executing command in
// container", such as gVisor's runsc not terminating on a loaded node) says nothing about the
// sandbox, so it is tried again, execAttempts times in all; the readings FAIL only when every
// attempt failed, and each attempt is printed.
func (r *Runner) execIn(ctx context.Context, pod string, cmd ...string) ExecResult {
	ns := r.cfg.Namespace
	if r.claimedPod == nil || pod != r.claimedPod.Name {
		ns = r.cfg.stackNamespace()
	}
	line := fmt.Sprintf("$ exec %s -- %s", pod, shellWords(cmd))
	for attempt := 1; ; attempt++ {
		ectx, cancel := context.WithTimeout(ctx, r.cfg.ExecTimeout)
		res := r.exec.Exec(ectx, ns, pod, "", cmd)
		cancel()
		switch {
		case res.Err != nil:
			r.rep.Printf("%s\n  exec error: %v", line, res.Err)
		default:
			out := strings.TrimRight(res.Stdout+res.Stderr, "\n")
			if out == "" {
				out = "(prints nothing)"
			}
			r.rep.Printf("%s\n  %s\n  (exit %d)", line, strings.ReplaceAll(out, "\n", "\n  "), res.ExitCode)
		}
		if attempt == execAttempts || !runtimeExecFailure(res) {
			return res
		}
		r.rep.Printf("  the container runtime failed the exec (attempt %d of %d); trying again in %s", attempt, execAttempts, execRetryPause)
		select {
		case <-ctx.Done():
			return res
		case <-time.After(execRetryPause):
		}
	}
}

// execAttempts and execRetryPause bound the retries of an exec the runtime failed.
const (
	execAttempts   = 3
	execRetryPause = 2 * time.Second
)

// runtimeExecFailure says whether the exec failed inside the container runtime, where trying
// again can succeed: not a refusal (RBAC, no route to the kubelet), and not a command the image
// lacks, which the same words carry and which no retry changes.
func runtimeExecFailure(r ExecResult) bool {
	if r.Err == nil {
		return false
	}
	if absent, _ := executableAbsent(r); absent {
		return false
	}
	return strings.Contains(r.Err.Error(), "error executing command in container")
}

// readings takes the sandbox and no-network readings from the claimed pod and
// the comparison readings from an ordinary pod.
func (r *Runner) readings(ctx context.Context) error {
	pod := r.claimedPod
	if pod == nil {
		r.skipReadings("no claimed pod was found in the adoption phase")
		return nil
	}
	if pod.Spec.NodeName == "" {
		r.failReadings(fmt.Sprintf("pod/%s has no node, though its claim is Ready", pod.Name))
		return nil
	}
	node, err := r.kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		r.failReadings(fmt.Sprintf("reading node/%s: %v", pod.Spec.NodeName, err))
		return nil
	}
	if none, why := noKubelet(node); none {
		r.skipReadings(why)
		return nil
	}

	r.rep.Printf("expected isolation: %s (%s)", r.cfg.Isolation, isolationMeaning[r.cfg.Isolation])
	r.rep.Printf("the claimed pod (%s), in a sandbox:", pod.Name)
	uname := r.execIn(ctx, pod.Name, "uname", "-rv")
	if uname.Err != nil {
		// The node has a kubelet, so a failed exec is a fault, not a SKIP.
		r.failReadings(fmt.Sprintf("exec into pod/%s on node/%s failed, so nothing was read: %v", pod.Name, node.Name, uname.Err))
		return nil
	}
	r.judge("sandbox", "exec into the claimed pod works", judgeExecWorks(uname))
	uptime := r.execIn(ctx, pod.Name, "cat", "/proc/uptime")
	podAge := time.Since(pod.CreationTimestamp.Time)
	block := r.execIn(ctx, pod.Name, "ls", "/sys/block")
	product := r.execIn(ctx, pod.Name, "cat", "/sys/class/dmi/id/product_name")

	ordinary, why := r.ordinaryPod(ctx)
	var oUname, oProduct *ExecResult
	if ordinary != "" {
		r.rep.Printf("the ordinary pod (%s), for comparison:", ordinary)
		u := r.execIn(ctx, ordinary, "uname", "-rv")
		if absent, msg := executableAbsent(u); absent {
			// A distroless image (the exporter's own) has no uname: that says
			// nothing about isolation, so compare with the node's kernel.
			why = fmt.Sprintf("pod/%s has no uname to run (%s)", ordinary, msg)
		} else {
			r.execIn(ctx, ordinary, "cat", "/proc/uptime")
			r.execIn(ctx, ordinary, "ls", "/sys/block")
			p := r.execIn(ctx, ordinary, "cat", "/sys/class/dmi/id/product_name")
			oUname, oProduct = &u, &p
		}
	}
	nodeKernel := node.Status.NodeInfo.KernelVersion
	if oUname == nil && nodeKernel == "" {
		r.rep.Skip("sandbox", "the claimed pod runs its own kernel", "no ordinary pod to compare with ("+why+") and node/"+node.Name+" reports no status.nodeInfo.kernelVersion")
	} else {
		if oUname == nil {
			r.rep.Printf("no ordinary pod's kernel to compare with (%s): node/%s reports kernel %s (status.nodeInfo.kernelVersion)", why, node.Name, nodeKernel)
		}
		r.judge("sandbox", "the claimed pod runs its own kernel", judgeKernel(uname, oUname, nodeKernel))
	}
	r.judge("sandbox", "the guest booted after the pod was created", judgeUptime(uptime, podAge))
	r.judge("sandbox", "the claimed pod sees virtio block devices", judgeBlockDevices(block, r.cfg.Isolation))
	r.judge("sandbox", "the DMI product name is the sandbox's own", judgeProductName(product, oProduct, r.cfg.Isolation))

	r.rep.Printf("the claimed pod is network-isolated, so there is no network to restrict:")
	addr := r.execIn(ctx, pod.Name, "ip", "-o", "addr", "show")
	r.judge("no-network", "only loopback has an address", judgeLoopbackOnly(addr))
	v4 := r.execIn(ctx, pod.Name, "ip", "-4", "route", "show", "default")
	v6 := r.execIn(ctx, pod.Name, "ip", "-6", "route", "show", "default")
	r.judge("no-network", "no default route in either family", judgeNoDefaultRoute(v4, v6))
	req := r.execIn(ctx, pod.Name, requestCommand(r.cfg.ProbeURL)...)
	r.judge("no-network", "an outbound request fails", judgeRequestFails(req))
	return nil
}

func (r *Runner) judge(phase, name string, v verdict) {
	if v.NA {
		r.rep.NA(phase, name, v.Why)
		return
	}
	r.rep.Judge(phase, name, v.OK, v.Why)
}

// ordinaryPod names a running, non-sandboxed pod to compare with: the flag,
// else a running pod of the exporter's Deployment. "" and why when none.
func (r *Runner) ordinaryPod(ctx context.Context) (string, string) {
	if r.cfg.OrdinaryPod != "" {
		return r.cfg.OrdinaryPod, ""
	}
	dep, err := r.kube.AppsV1().Deployments(r.cfg.stackNamespace()).Get(ctx, r.cfg.ExporterService, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Sprintf("no exporter Deployment %s (%v); name one with --ordinary-pod", r.cfg.ExporterService, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil || sel.Empty() {
		return "", fmt.Sprintf("deployment/%s has no usable selector", dep.Name)
	}
	pods, err := r.kube.CoreV1().Pods(r.cfg.stackNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", fmt.Sprintf("listing the exporter's pods: %v", err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.RuntimeClassName == nil && p.DeletionTimestamp == nil {
			node, err := r.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err == nil {
				if none, why := noKubelet(node); none {
					return "", why
				}
			}
			return p.Name, ""
		}
	}
	return "", fmt.Sprintf("no running pod matches %s", labels.Set(dep.Spec.Selector.MatchLabels))
}

// shellWords prints a command as a shell would take it: a word with spaces
// or quotes in single quotes.
func shellWords(cmd []string) string {
	w := make([]string, len(cmd))
	for i, c := range cmd {
		if strings.ContainsAny(c, " \t\n'\"$;|&") {
			c = "'" + strings.ReplaceAll(c, "'", `'\''`) + "'"
		}
		w[i] = c
	}
	return strings.Join(w, " ")
}
