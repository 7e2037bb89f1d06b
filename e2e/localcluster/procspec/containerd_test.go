package procspec

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/host"
)

// The containerd config a real node writes, read back as containerd reads it: every socket and
// directory under the node's own, nothing listening beyond loopback, gVisor never on the bridge.
func TestContainerdConfigKeepsTheNodeToItsDirectoryAndLoopback(t *testing.T) {
	n := &RealNode{Name: "realnode-0", Dir: "/state/realnode-0"}
	g := Containerd(ContainerdSettings{Binary: "/tools/containerd", Runsc: "/tools/runsc", Node: n,
		Paths: ContainerdPathsOf(n, "/state/realnode-0/cni", "/tools/shim-runc", "/tools/shim-runsc", "/state/programs")})
	if g.Name != "realnode-0-containerd" || g.ready.socket != n.ContainerdSocket() {
		t.Errorf("containerd process %q ready by socket %q; want realnode-0-containerd, ready by %s", g.Name, g.ready.socket, n.ContainerdSocket())
	}
	config := filepath.Join(n.ContainerdDir(), "config.toml")
	if !slices.Contains(g.args, "--config="+config) {
		t.Errorf("args %v do not name %s", g.args, config)
	}
	var cfg map[string]any
	if _, err := toml.Decode(fileData(t, g, config), &cfg); err != nil {
		t.Fatal(err)
	}
	get := func(keys ...string) any {
		var v any = cfg
		for _, k := range keys {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		}
		return v
	}
	cri := []string{"plugins", "io.containerd.cri.v1.runtime"}
	runtime := func(handler string, keys ...string) any {
		return get(append(append(cri, "containerd", "runtimes", handler), keys...)...)
	}
	for _, check := range []struct {
		what string
		got  any
		want any
	}{
		{"config version", get("version"), int64(3)},
		{"gRPC socket", get("grpc", "address"), "/state/realnode-0/containerd.sock"},
		{"ttrpc socket", get("ttrpc", "address"), "/state/realnode-0/containerd.sock.ttrpc"},
		{"debug listener (none)", get("debug", "address"), ""},
		{"metrics listener (none)", get("metrics", "address"), ""},
		{"a shim's task-state answer may take a minute", get("timeouts", "io.containerd.timeout.task.state"), "1m"},
		{"a shim's cleanup may take a minute", get("timeouts", "io.containerd.timeout.shim.cleanup"), "1m"},
		{"CRI streaming address", get("plugins", "io.containerd.grpc.v1.cri", "stream_server_address"), "127.0.0.1"},
		{"default runtime", get(append(cri, "containerd", "default_runtime_name")...), RuncHandler},
		{"pod network config", get(append(cri, "cni", "conf_dir")...), "/state/realnode-0/cni"},
		{"gVisor's shim", runtime(RunscHandler, "runtime_type"), "io.containerd.runsc.v1"},
		{"gVisor's network", runtime(RunscHandler, "cni_conf_dir"), host.LoopbackOnlyConfDir(n.Dir)},
		{"the reject run's network", runtime(RuncLoopbackHandler, "cni_conf_dir"), host.LoopbackOnlyConfDir(n.Dir)},
		{"runc's pods on the bridge", runtime(RuncHandler, "cni_conf_dir"), nil},
		{"sandbox image", get("plugins", "io.containerd.cri.v1.images", "pinned_images", "sandbox"), PauseImage},
	} {
		if check.got != check.want {
			t.Errorf("%s = %#v, want %#v", check.what, check.got, check.want)
		}
	}
	for _, k := range []string{"root", "state"} {
		if s, _ := get(k).(string); !strings.HasPrefix(s, n.Dir+"/") {
			t.Errorf("%s = %q, outside the node's directory %s", k, s, n.Dir)
		}
	}
	if d, _ := get("disabled_plugins").([]any); len(d) != 1 || d[0] != "io.containerd.nri.v1.nri" {
		t.Errorf("disabled_plugins = %v, want NRI disabled (it opens a socket under /var/run/nri)", d)
	}
}
