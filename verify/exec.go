package main

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

// execImpossible recognises an exec that could not reach a kubelet at all
// (a KWOK node, a node without a kubelet): the reading was never taken, so
// the checks it feeds are SKIP, not PASS and not a refused exec.
func execImpossible(err error) (bool, string) {
	if err == nil {
		return false, ""
	}
	msg := strings.ToLower(err.Error())
	for _, p := range []string{"error dialing backend", "no kubelet", "connection refused", "no route to host", "no agent available"} {
		if strings.Contains(msg, p) {
			return true, "exec could not reach a kubelet (" + strings.TrimSpace(err.Error()) + ")"
		}
	}
	return false, ""
}

// kwokNode recognises a KWOK simulated node, where no kubelet serves exec.
func kwokNode(n *corev1.Node) (bool, string) {
	if n == nil {
		return false, ""
	}
	if v, ok := n.Annotations[annoKwokNode]; ok {
		return true, "node " + n.Name + " is a KWOK simulated node (annotation " + annoKwokNode + "=" + v + "): no kubelet serves exec there"
	}
	return false, ""
}
