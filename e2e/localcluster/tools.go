package localcluster

import "warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"

// neededTools are the control plane's tools less KEDA when it is not started
// (its CRDs and APIService are then not installed either) and less KWOK when
// no node is simulated, plus Karpenter when asked for and a real node's tools
// with real nodes: all built before anything starts (each is pure Go, built
// without cgo, so none waits for the Debian packages a real node installs), so
// that every process's spec names its binary from the start.
func neededTools(opts Options) []string {
	skip := map[string]bool{"kwok": opts.Nodes == 0}
	for _, w := range opts.Without {
		skip["keda"] = skip["keda"] || w == "keda"
	}
	var out []string
	for _, t := range toolcache.ControlPlane {
		if !skip[t] {
			out = append(out, t)
		}
	}
	if opts.Karpenter != nil {
		out = append(out, toolcache.NodeAutoscaler...)
	}
	if opts.RealNodes > 0 {
		out = append(out, toolcache.Node...)
	}
	return out
}
