package procspec

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// The RuntimeClass handlers a real node's containerd serves: runc for
// ordinary pods (the default), gVisor's runsc for the isolated RuntimeClass.
const (
	RuncHandler  = "runc"
	RunscHandler = "runsc"
	// RuncLoopbackHandler is runc with only loopback (LoopbackOnlyRuntimeClass).
	RuncLoopbackHandler = "runc-loopback-only"
	// PauseImage is the sandbox ("pause") image, built locally (nodes/images.go).
	PauseImage = "localcluster.local/pause:1"
)

// ContainerdPaths is everything of one node's containerd that is a path: its
// own root, state and sockets under the node's directory (so it never touches
// a system containerd), the shims, and the CNI directories.
type ContainerdPaths struct {
	Root, State, Opt       string
	Socket                 string // gRPC; ttrpc beside it
	RuncShim, RunscShim    string
	RuncRoot, RunscConfig  string
	CNIBinDirs             []string
	CNIConfDir             string // the pod network (bridge)
	LoopbackOnlyCNIConfDir string // loopback only: gVisor's and the reject run's runtimes
}

// ContainerdPathsOf are node n's containerd paths, with the shims at
// runcShim and runscShim and the CNI plugins in the system's directory and
// programDir (the node's own).
func ContainerdPathsOf(n *RealNode, cniConfDir, runcShim, runscShim, programDir string) ContainerdPaths {
	cd := n.ContainerdDir()
	return ContainerdPaths{
		Root: filepath.Join(cd, "root"), State: filepath.Join(cd, "state"), Opt: filepath.Join(cd, "opt"),
		Socket:   n.ContainerdSocket(),
		RuncShim: runcShim, RunscShim: runscShim,
		RuncRoot: filepath.Join(cd, "runc"), RunscConfig: filepath.Join(cd, "runsc.toml"),
		CNIBinDirs: []string{host.CNIBinDir, programDir}, CNIConfDir: cniConfDir,
		LoopbackOnlyCNIConfDir: host.LoopbackOnlyConfDir(n.Dir),
	}
}

// containerdConfig is containerd 2.x's configuration (version 3) for one node,
// as data: nothing of it listens beyond loopback.
func containerdConfig(p ContainerdPaths) map[string]any {
	runc := func(cniConfDir string) map[string]any {
		r := map[string]any{
			"runtime_type": "io.containerd.runc.v2",
			"runtime_path": p.RuncShim,
			"options":      map[string]any{"BinaryName": "/usr/sbin/runc", "Root": p.RuncRoot, "SystemdCgroup": false},
		}
		if cniConfDir != "" {
			r["cni_conf_dir"] = cniConfDir
		}
		return r
	}
	return map[string]any{
		"version": 3,
		"root":    p.Root,
		"state":   p.State,
		// NRI would open a socket under /var/run/nri.
		"disabled_plugins": []string{"io.containerd.nri.v1.nri"},
		"grpc":             map[string]any{"address": p.Socket},
		"ttrpc":            map[string]any{"address": p.Socket + ".ttrpc"},
		"debug":            map[string]any{"address": ""},
		"metrics":          map[string]any{"address": ""},
		"timeouts":         containerdTimeouts,
		"plugins": map[string]any{
			"io.containerd.internal.v1.opt": map[string]any{"path": p.Opt},
			"io.containerd.grpc.v1.cri":     map[string]any{"stream_server_address": "127.0.0.1", "stream_server_port": "0"},
			"io.containerd.cri.v1.images": map[string]any{
				"snapshotter":   "overlayfs",
				"pinned_images": map[string]any{"sandbox": PauseImage},
			},
			"io.containerd.cri.v1.runtime": map[string]any{
				// root lacks CAP_SYS_RESOURCE here: no oom_score_adj below the current one.
				"restrict_oom_score_adj": true,
				// Network namespaces under the state dir, not /run/netns (shared with the machine).
				"netns_mounts_under_state_dir": true,
				"cdi_spec_dirs":                []string{},
				"cni":                          map[string]any{"bin_dirs": p.CNIBinDirs, "conf_dir": p.CNIConfDir},
				"containerd": map[string]any{
					"default_runtime_name": RuncHandler,
					"runtimes": map[string]any{
						RuncHandler: runc(""),
						// gVisor is never on the bridge: an address for the CRI's sake, no interface.
						RunscHandler: map[string]any{
							"runtime_type": "io.containerd.runsc.v1",
							"runtime_path": p.RunscShim,
							"cni_conf_dir": p.LoopbackOnlyCNIConfDir,
							"options":      map[string]any{"TypeUrl": "io.containerd.runsc.v1.options", "ConfigPath": p.RunscConfig},
						},
						RuncLoopbackHandler: runc(p.LoopbackOnlyCNIConfDir),
					},
				},
			},
		},
	}
}

// containerdTimeouts replace containerd's bounds on a shim's answers, set for an idle server (2 s
// for a task's state, 3-5 s to stop or clean up a shim; containerd v2.4.2 plugins/services/tasks,
// core/runtime/v2): with two cores shared by the lanes, gVisor's shim answered a task-state call
// late, containerd gave up on it, and an exec into a healthy sandbox failed with "failed to load
// task: context deadline exceeded". A minute bounds a shim that hangs; none of these bound a
// sandbox's readiness, which the tests read themselves.
var containerdTimeouts = map[string]any{
	"io.containerd.timeout.task.state":    "1m",
	"io.containerd.timeout.shim.load":     "1m",
	"io.containerd.timeout.shim.cleanup":  "1m",
	"io.containerd.timeout.shim.shutdown": "1m",
}

// runscConfig is the gVisor shim's: no network at all (only loopback inside
// the sandbox, whatever CNI did outside it) and the systrap platform (this
// machine's /dev/kvm runs no stock guest; KVM panics).
func runscConfig(runsc, root string) map[string]any {
	return map[string]any{
		"binary_name":  runsc,
		"root":         root,
		"runsc_config": map[string]any{"network": "none", "platform": "systrap"},
	}
}

// encodeTOML encodes v as TOML. The values are fixed maps of strings,
// numbers and lists, so a failure is a programming error.
func encodeTOML(v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		panic(fmt.Sprintf("encoding TOML: %v", err))
	}
	return b.String()
}

// ContainerdSettings are what a real node's containerd's command line and
// configuration depend on.
type ContainerdSettings struct {
	Binary string
	Runsc  string // gVisor's runsc, which the runsc shim runs
	Node   *RealNode
	Paths  ContainerdPaths
}

// Containerd is node's own containerd, its configuration and the gVisor
// shim's beside it; ready when its socket accepts connections.
func Containerd(s ContainerdSettings) Spec {
	cd := s.Node.ContainerdDir()
	cfg := filepath.Join(cd, "config.toml")
	return Spec{
		Name: s.Node.Name + "-containerd", binary: s.Binary,
		args: []string{"--config=" + cfg, "--log-level=warn"},
		files: []file{
			{path: s.Paths.RunscConfig, data: encodeTOML(runscConfig(s.Runsc, filepath.Join(cd, "runsc-root")))},
			{path: cfg, data: encodeTOML(containerdConfig(s.Paths))},
		},
		ready: readiness{socket: s.Node.ContainerdSocket(), timeout: 60 * time.Second},
	}
}
