package verifier

import (
	"bytes"
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	uexec "k8s.io/client-go/util/exec"
)

// ExecResult is one command's answer. Err is set only when the exec itself
// failed (refused, unreachable); a command that ran and exited non-zero has
// Err nil and its ExitCode.
type ExecResult struct {
	Stdout, Stderr string
	ExitCode       int
	Err            error
}

// ran is true when the command ran and exited 0.
func (r ExecResult) ran() bool { return r.Err == nil && r.ExitCode == 0 }

// executableAbsent says whether a command did not run because the container
// has no such executable (a distroless image), and the runtime's words.
// containerd refuses the exec ("executable file not found in $PATH"); a
// shell that looked the name up exits 127.
func executableAbsent(r ExecResult) (bool, string) {
	msg := r.Stderr
	if r.Err != nil {
		msg = r.Err.Error()
	}
	msg = strings.TrimSpace(msg)
	if strings.Contains(msg, "executable file not found") {
		return true, msg
	}
	if r.Err == nil && r.ExitCode == 127 {
		return true, msg
	}
	return false, ""
}

// Execer runs a command in a pod's container ("" = the default container).
type Execer interface {
	Exec(ctx context.Context, ns, pod, container string, cmd []string) ExecResult
}

// remoteExecer execs through the API server like kubectl: websocket first,
// SPDY when the upgrade is refused.
type remoteExecer struct {
	cfg  *rest.Config
	kube kubernetes.Interface
}

func (e remoteExecer) Exec(ctx context.Context, ns, pod, container string, cmd []string) ExecResult {
	req := e.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(e.cfg, "GET", req.URL().String())
	if err != nil {
		return ExecResult{Err: err}
	}
	spdy, err := remotecommand.NewSPDYExecutor(e.cfg, "POST", req.URL())
	if err != nil {
		return ExecResult{Err: err}
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return ExecResult{Err: err}
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	res := ExecResult{Stdout: out.String(), Stderr: errb.String()}
	var exit uexec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		res.ExitCode = exit.ExitStatus()
	} else if err != nil {
		res.Err = err
	}
	return res
}

// noKubelet says whether a node has no kubelet to serve exec, from the node
// object alone: a KWOK simulated node (annotation kwok.x-k8s.io/node=fake), or
// a node that publishes no kubelet endpoint (daemonEndpoints port 0). Only
// then are the readings SKIP; an exec that fails on any other node is a FAIL
// with its error, whatever the error says.
func noKubelet(n *corev1.Node) (bool, string) {
	if n == nil {
		return false, ""
	}
	if v := n.Annotations[annoKwokNode]; v == "fake" {
		return true, "node " + n.Name + " is a KWOK simulated node (annotation " + annoKwokNode + "=" + v + "): no kubelet serves exec there"
	}
	if n.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		return true, "node " + n.Name + " publishes no kubelet endpoint (status.daemonEndpoints.kubeletEndpoint.Port is 0): no kubelet serves exec there"
	}
	return false, ""
}
