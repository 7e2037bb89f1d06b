package procspec

import "path/filepath"

// A RealNode is a kubelet v1.36.3 with its own containerd 2.x (runc for
// ordinary pods, gVisor's runsc for the isolated RuntimeClass), on the
// host's network namespace and cgroup tree, its pods on a bridge in
// 198.18.0.0/15 that nothing outside the machine ever sees: what its
// processes' settings are made of.
type RealNode struct {
	Name                           string
	Index                          int
	Dir                            string // <state>/<name>
	Cgroup                         string // top-level cgroup of its pods
	KubeletPort, KubeletHealthPort int
}

// ContainerdDir holds the node's containerd's root, state and configuration.
func (n *RealNode) ContainerdDir() string { return filepath.Join(n.Dir, "containerd") }

// ContainerdSocket is where the node's containerd serves the CRI.
func (n *RealNode) ContainerdSocket() string { return filepath.Join(n.Dir, "containerd.sock") }
